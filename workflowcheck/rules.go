package workflowcheck

import (
	"go/types"
	"slices"
)

// The diagnostics of the constructs the walker reports; each names what
// workflow code uses instead.
const (
	msgGo              = "go statement in workflow code: use workflow.Go(ctx, fn), whose coroutines the replay runs in a fixed order"
	msgSend            = "channel send in workflow code: return the value from a workflow.Go coroutine and wait on its workflow.Future"
	msgReceive         = "channel receive in workflow code: wait on a workflow.Future (Get, workflow.Gather or workflow.Select)"
	msgSelect          = "select statement in workflow code: use workflow.Select(ctx, futures...) over futures, hooks and workflow.After timers"
	msgMapRange        = "range over a map in workflow code visits keys in a random order: range over slices.Sorted(maps.Keys(m))"
	msgMapIter         = "%s in workflow code yields in a random order: sort it with slices.Sorted (slices.Sorted(maps.Keys(m)))"
	msgStepCall        = "%s is a step function called directly from workflow code, so it runs unrecorded on every replay: call %s.Call(ctx, input) or %s.Go(ctx, input)"
	msgStepCallUnnamed = "%s is a step function called directly from workflow code, so it runs unrecorded on every replay: call it through its workflow.Step's Call or Go"
)

// A forbidden use: what it is and what to do instead.
type rule struct{ what, fix string }

const (
	fixNow   = "use workflow.Now(ctx), the time recorded in the run's log"
	fixSleep = "use workflow.Sleep(ctx, d), a durable timer"
	fixTimer = "use workflow.After(ctx, d), a durable timer's Future (race it with workflow.Select)"
	fixRand  = "use workflow.Random(ctx), workflow.RandomN(ctx, n) or workflow.UUID(ctx), seeded by the run"
	fixCrypt = "draw secrets in a step; for randomness that replays, use workflow.Random(ctx) or workflow.UUID(ctx)"
	fixIO    = "do it in a step (workflow.DefineStep) and use the result it records"
	fixWait  = "wait on workflow.Future values (Get, workflow.Gather, workflow.Select): a goroutine blocked outside a durable call stalls the replay"
)

var timeFixes = map[string]string{
	"Now": fixNow, "Since": "use workflow.Now(ctx).Sub(t), from the time recorded in the run's log",
	"Until": "use t.Sub(workflow.Now(ctx)), from the time recorded in the run's log",
	"Sleep": fixSleep,
	"After": fixTimer, "AfterFunc": fixTimer, "Tick": fixTimer, "NewTimer": fixTimer, "NewTicker": fixTimer,
}

// Package-level functions of these packages that neither do I/O nor read
// the process's state: parsing, formatting, classifying errors.
var (
	pureOS  = []string{"IsExist", "IsNotExist", "IsPermission", "IsTimeout", "IsPathSeparator", "NewSyscallError", "Expand", "SameFile"}
	pureNet = []string{"ParseIP", "ParseCIDR", "ParseMAC", "IPv4", "IPv4Mask", "CIDRMask", "JoinHostPort", "SplitHostPort", "TCPAddrFromAddrPort", "UDPAddrFromAddrPort"}
	// math/rand constructors of a source the caller seeds: deterministic
	// for a fixed seed (a seed from time.Now is reported there).
	seededRand = []string{"New", "NewSource", "NewZipf", "NewPCG", "NewChaCha8"}
	// net/http functions that do I/O; its other functions build or parse
	// values (NewRequest, StatusText, ...).
	ioHTTP = []string{"Get", "Head", "Post", "PostForm", "ListenAndServe", "ListenAndServeTLS", "Serve", "ServeTLS", "ProxyFromEnvironment"}
)

// classify reports whether workflow code may not use obj, a function,
// method or variable it refers to.
func classify(obj types.Object) (rule, bool) {
	if obj.Pkg() == nil {
		return rule{}, false
	}
	pkg, name := obj.Pkg().Path(), obj.Name()
	what := obj.Pkg().Name() + "." + name
	recv := ""
	switch obj := obj.(type) {
	case *types.Func:
		if r := obj.Signature().Recv(); r != nil {
			recv = receiverName(r.Type())
			what = obj.Pkg().Name() + "." + recv + "." + name
		}
	case *types.Var:
		if obj.Parent() != obj.Pkg().Scope() { // a local or a field
			return rule{}, false
		}
		return classifyVar(pkg, name, what)
	default:
		return rule{}, false
	}
	isIO := false
	switch pkg {
	case "time":
		if fix, ok := timeFixes[name]; ok && recv == "" {
			return rule{what, fix}, true
		}
	case "math/rand", "math/rand/v2":
		if recv == "" && !slices.Contains(seededRand, name) {
			return rule{what, fixRand}, true
		}
	case "crypto/rand":
		return rule{what, fixCrypt}, true
	case "sync":
		if recv == "WaitGroup" && (name == "Wait" || name == "Go") || recv == "Cond" && name == "Wait" {
			return rule{what, fixWait}, true
		}
	case "os":
		isIO = recv == "File" || recv == "Process" || (recv == "" && !slices.Contains(pureOS, name))
	case "net":
		isIO = recv == "Dialer" || recv == "Resolver" || recv == "ListenConfig" || (recv == "" && !slices.Contains(pureNet, name))
	case "net/http":
		isIO = recv == "Client" || recv == "Transport" || recv == "Server" || (recv == "" && slices.Contains(ioHTTP, name))
	}
	if isIO {
		return rule{what, fixIO}, true
	}
	return rule{}, false
}

// classifyVar covers the package-level variables that are I/O or process
// state: the standard streams, the arguments, the default HTTP client.
func classifyVar(pkg, name, what string) (rule, bool) {
	switch {
	case pkg == "crypto/rand":
		return rule{what, fixCrypt}, true
	case pkg == "os" && slices.Contains([]string{"Args", "Stdin", "Stdout", "Stderr"}, name),
		pkg == "net/http" && (name == "DefaultClient" || name == "DefaultTransport"):
		return rule{what, fixIO}, true
	}
	return rule{}, false
}

func receiverName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if named, ok := types.Unalias(t).(*types.Named); ok {
		return named.Obj().Name()
	}
	return ""
}
