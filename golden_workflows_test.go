package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// The workflows whose runs are recorded in testdata/golden. Their logs are
// replayed against them by every test run (golden_test.go), so these
// definitions are frozen: a change that breaks the replay of a log is
// exactly what the golden test exists to catch. To change one, define a
// new workflow beside it and record a new log.

var goldenFlaky = workflow.DefineStep("golden.flaky", func(ctx context.Context, order string) (string, error) {
	info, _ := workflow.GetStepInfo(ctx)
	if info.Attempt < 3 {
		return "", fmt.Errorf("attempt %d: gateway timeout", info.Attempt)
	}
	return "charged " + order, nil
}, workflow.WithMaxRetries(4), workflow.WithBackoff(func(retry int) time.Duration { return time.Duration(retry) * time.Minute }))

// goldenRetry calls a step that fails twice before it succeeds.
var goldenRetry = workflow.Define("golden.retry", func(ctx workflow.Context, order string) (string, error) {
	return goldenFlaky.Call(ctx, order)
})

var goldenDouble = workflow.DefineStep("golden.double", func(ctx context.Context, n int) (int, error) {
	return 2 * n, nil
})

// goldenFanOut starts steps in parallel, one of them from a coroutine that
// also sleeps, and joins them.
var goldenFanOut = workflow.Define("golden.fanout", func(ctx workflow.Context, n int) (int, error) {
	var futures []workflow.Future[int]
	for i := range n {
		futures = append(futures, goldenDouble.Go(ctx, i))
	}
	futures = append(futures, workflow.Go(ctx, func(ctx workflow.Context) (int, error) {
		workflow.Sleep(ctx, time.Second)
		return goldenDouble.Call(ctx, 100)
	}))
	values, err := workflow.Gather(ctx, futures...)
	sum := 0
	for _, v := range values {
		sum += v
	}
	return sum, err
})

// goldenSleep sleeps for a day between two steps; the second's input is
// the workflow's deterministic time.
var goldenSleep = workflow.Define("golden.sleep", func(ctx workflow.Context, _ struct{}) (int, error) {
	before, err := goldenDouble.Call(ctx, workflow.Now(ctx).Hour())
	if err != nil {
		return 0, err
	}
	workflow.Sleep(ctx, 24*time.Hour)
	return goldenDouble.Call(ctx, before+workflow.Now(ctx).Day())
})

type goldenApproval struct {
	Approver string `json:"approver"`
	Approved bool   `json:"approved"`
}

var goldenApprovals = workflow.DefineHook(func(a goldenApproval) error {
	if a.Approver == "" {
		return errors.New("an approval needs an approver")
	}
	return nil
})

// goldenHooks waits for approvals until one approves, releases its hook,
// then counts the refusals in a step.
var goldenHooks = workflow.Define("golden.hooks", func(ctx workflow.Context, id string) (string, error) {
	h := goldenApprovals.Create(ctx, workflow.WithToken("golden-approval:"+id), workflow.WithMetadata(map[string]string{"order": id}))
	var refused []string
	for a, err := range h.All(ctx) {
		if err != nil {
			return "", err
		}
		if a.Approved {
			h.Dispose(ctx)
			n, err := goldenDouble.Call(ctx, len(refused))
			return fmt.Sprintf("approved by %s after %d refusals", a.Approver, n/2), err
		}
		refused = append(refused, a.Approver)
	}
	return "", errors.New("hook disposed without approval")
})

type goldenQuery struct {
	SKU string `json:"sku"`
}

type goldenQuote struct {
	Price int `json:"price"`
}

var goldenQuotes = workflow.DefineRespondingHook[goldenQuery, goldenQuote]()

var goldenAnswer = workflow.DefineStep("golden.answer", func(ctx context.Context, m workflow.HookMessage[goldenQuery, goldenQuote]) (int, error) {
	price := 10 * len(m.Data.SKU)
	return price, m.Respond(ctx, goldenQuote{Price: price})
})

// goldenResponding answers two queries on a responding hook.
var goldenResponding = workflow.Define("golden.responding", func(ctx workflow.Context, token string) (int, error) {
	h := goldenQuotes.Create(ctx, workflow.WithToken(token))
	total := 0
	for range 2 {
		m, err := h.Receive(ctx)
		if err != nil {
			return total, err
		}
		price, err := goldenAnswer.Call(ctx, m)
		if err != nil {
			return total, err
		}
		total += price
	}
	return total, nil
})

// goldenChild runs goldenRetry as a child run and waits for it.
var goldenChild = workflow.Define("golden.child", func(ctx workflow.Context, order string) (string, error) {
	child := goldenRetry.StartChild(ctx, strings.ToUpper(order))
	receipt, err := child.Get(ctx)
	return "child " + child.RunID(ctx) + ": " + receipt, err
})

// goldenLateChild starts a child as the last thing it does, without
// waiting for it.
var goldenLateChild = workflow.Define("golden.lateChild", func(ctx workflow.Context, order string) (int, error) {
	n, err := goldenDouble.Call(ctx, len(order))
	if err != nil {
		return 0, err
	}
	goldenRetry.StartChild(ctx, strings.ToUpper(order))
	return n, nil
})

// goldenAttributes records attributes, some drawn from the run's
// deterministic random source, and feeds them to a step.
var goldenAttributes = workflow.Define("golden.attributes", func(ctx workflow.Context, customer string) (int, error) {
	ticket := workflow.UUID(ctx)
	if err := workflow.SetAttributes(ctx, map[string]string{"customer": customer, "ticket": ticket}); err != nil {
		return 0, err
	}
	n, err := goldenDouble.Call(ctx, workflow.RandomN(ctx, 1000))
	if err != nil {
		return 0, err
	}
	return n, workflow.SetAttributes(ctx, map[string]string{"stage": "done"})
})

var goldenDecline = workflow.DefineStep("golden.decline", func(ctx context.Context, order string) (string, error) {
	return "", workflow.Fatal(fmt.Errorf("card for %s declined", order))
})

// goldenFailed fails because a step fails for good.
var goldenFailed = workflow.Define("golden.failed", func(ctx workflow.Context, order string) (string, error) {
	if _, err := goldenDouble.Call(ctx, len(order)); err != nil {
		return "", err
	}
	receipt, err := goldenDecline.Call(ctx, order)
	if err != nil {
		return "", fmt.Errorf("checkout %s: %w", order, err)
	}
	return receipt, nil
})

// goldenCancelled sleeps for a week; the recording cancels it meanwhile.
var goldenCancelled = workflow.Define("golden.cancelled", func(ctx workflow.Context, _ struct{}) (int, error) {
	n, err := goldenDouble.Call(ctx, 1)
	if err != nil {
		return 0, err
	}
	workflow.Sleep(ctx, 7*24*time.Hour)
	return goldenDouble.Call(ctx, n)
})

// goldenDesk holds a hook token: force says whether it takes the token
// over from a run holding it. It returns who has the token in the end.
var goldenDesk = workflow.Define("golden.desk", func(ctx workflow.Context, force bool) (string, error) {
	opts := []workflow.HookOption{workflow.WithToken("golden-desk")}
	if force {
		opts = append(opts, workflow.WithForceClaim())
	}
	h := workflow.CreateHook[string](ctx, opts...)
	if owner := h.Conflict(ctx); owner != "" {
		return "held by " + owner, nil
	}
	who, err := h.Receive(ctx)
	if errors.Is(err, workflow.ErrHookForceClaimed) {
		return "taken by " + h.Conflict(ctx), nil
	}
	return "served " + who, err
})

// goldenPatched takes the patched branch of a change, as a new run does.
var goldenPatched = workflow.Define("golden.patched", func(ctx workflow.Context, n int) (int, error) {
	if workflow.Patched(ctx, "golden-triple") {
		return goldenDouble.Call(ctx, 3*n)
	}
	return goldenDouble.Call(ctx, n)
})
