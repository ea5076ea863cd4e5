// Package workflowcheck is a go/analysis analyzer that reports code which
// breaks replay in workflow functions of github.com/lambdaworkflow/workflow.
//
// Workflow code is every function passed to workflow.Define, every function
// or function literal with a workflow.Context parameter, and, transitively,
// every function of the same package they call or take as a value. Code
// passed to workflow.DefineStep is step code and is not checked: steps are
// where I/O belongs. In workflow code the analyzer reports:
//
//   - time.Now, Since, Until, Sleep, After, AfterFunc, Tick, NewTimer and
//     NewTicker (use workflow.Now, Sleep, After);
//   - go statements (workflow.Go), channel sends and receives, range over a
//     channel, select statements, and sync.WaitGroup and sync.Cond waits
//     (workflow.Future, workflow.Gather, workflow.Select);
//   - math/rand and math/rand/v2 functions that use the global source, and
//     all of crypto/rand (workflow.Random, RandomN, UUID, or a step);
//   - os, net and net/http calls that do I/O or read the process's
//     environment (os.Getenv, os.ReadFile, net.Dial, http.Get,
//     http.DefaultClient, methods of *http.Client, ...): do it in a step;
//   - range over a map, and maps.Keys/Values/All unless sorted with
//     slices.Sorted (or collected into a map);
//   - direct calls of a function registered with workflow.DefineStep, which
//     run the step unrecorded on every replay (call Step.Call or Step.Go).
//
// A comment //workflowcheck:ignore followed by the reason silences the
// statement or expression that starts on its line (when it trails code) or
// on the next line (when it stands alone), with everything inside it; in a
// function's doc comment it leaves the whole function unchecked.
package workflowcheck

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// workflowPkg is the import path of the SDK whose workflow functions are checked.
const workflowPkg = "github.com/lambdaworkflow/workflow"

// Analyzer reports non-deterministic code in workflow functions.
var Analyzer = &analysis.Analyzer{
	Name: "workflowcheck",
	Doc:  "reports code that breaks replay in workflow functions (time, goroutines, channels, randomness, I/O, map order, direct step calls)",
	URL:  "https://pkg.go.dev/github.com/lambdaworkflow/workflow/workflowcheck",
	Run:  run,
}

func run(pass *analysis.Pass) (any, error) {
	// The SDK's own package implements the primitives; a package that does
	// not import it has no workflow code.
	if pass.Pkg.Path() == workflowPkg || !importsWorkflow(pass.Pkg) {
		return nil, nil
	}
	c := newChecker(pass)
	c.findRoots()
	c.checkReachable()
	return nil, nil
}

func importsWorkflow(pkg *types.Package) bool {
	for _, imp := range pkg.Imports() {
		if imp.Path() == workflowPkg {
			return true
		}
	}
	return false
}

// isContext reports whether t is workflow.Context.
func isContext(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == workflowPkg && named.Obj().Name() == "Context"
}

// takesContext reports whether a function of this type gets a workflow.Context.
func takesContext(sig *types.Signature) bool {
	for v := range sig.Params().Variables() {
		if isContext(v.Type()) {
			return true
		}
	}
	return false
}

// isWorkflowFunc reports whether obj is the SDK's package-level function name.
func isWorkflowFunc(obj types.Object, name string) bool {
	fn, ok := obj.(*types.Func)
	return ok && fn.Pkg() != nil && fn.Pkg().Path() == workflowPkg && fn.Name() == name && fn.Signature().Recv() == nil
}

// funcArg is the function argument of a Define or DefineStep call.
func funcArg(call *ast.CallExpr) ast.Expr {
	if len(call.Args) < 2 {
		return nil
	}
	return ast.Unparen(call.Args[1])
}
