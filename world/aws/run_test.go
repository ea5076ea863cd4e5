package aws

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

var awsStep = workflow.DefineStep("aws-test.step", func(ctx context.Context, n int) (int, error) { return n + 1, nil })

var awsFlow = workflow.Define("aws-test.flow", func(ctx workflow.Context, id string) (string, error) {
	n := 0
	for range 3 {
		var err error
		if n, err = awsStep.Call(ctx, n); err != nil {
			return "", err
		}
	}
	workflow.Sleep(ctx, 2*time.Second)
	h := workflow.CreateHook[string](ctx, workflow.WithToken("aws-test:"+id))
	word, err := h.Receive(ctx)
	return fmt.Sprint(word, " ", n), err
})

var awsChain = workflow.Define("aws-test.chain", func(ctx workflow.Context, steps int) (int, error) {
	n := 0
	for range steps {
		var err error
		if n, err = awsStep.Call(ctx, n); err != nil {
			return 0, err
		}
	}
	return n, nil
})

// A run with three steps, a 2 s sleep (longer than the worker waits
// inline, so it suspends through a delayed SQS message) and a hook
// completes on the AWS World.
func TestRunThroughTheAWSWorld(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	c := workflow.NewClient(w)
	id := fmt.Sprint(time.Now().UnixNano())
	run, err := workflow.Start(ctx, c, awsFlow, id)
	if err != nil {
		t.Fatal(err)
	}
	for workflow.ResumeHook(ctx, c, "aws-test:"+id, "resumed") != nil {
		if ctx.Err() != nil {
			t.Fatal("the run never created its hook")
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, err := run.Result(ctx)
	if err != nil || got != "resumed 3" {
		t.Fatalf("got %q, %v", got, err)
	}
	evs, _ := w.Events(ctx, run.ID, 0)
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Type))
	}
	if tl := strings.Join(kinds, " "); !strings.Contains(tl, "wait_completed") || !strings.Contains(tl, "hook_received") {
		t.Fatalf("log: %s", tl)
	}
}

// The cost model: AWS calls for one inline step, measured as the
// difference between a 12-step and a 2-step run driven by one invocation.
func TestCallsPerInlineStep(t *testing.T) {
	w := newTestWorld(t)
	ctx := context.Background()
	c := workflow.NewClient(w)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	cost := func(steps int) map[string]int64 {
		run, err := workflow.Start(ctx, c, awsChain, steps)
		if err != nil {
			t.Fatal(err)
		}
		w.ResetCalls()
		if err := worker.Process(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := run.Result(ctx); err != nil || got != steps {
			t.Fatalf("got %d, %v", got, err)
		}
		return w.Calls()
	}
	small, large := cost(2), cost(12)
	perStep := map[string]float64{}
	for op, n := range large {
		if d := float64(n-small[op]) / 10; d != 0 {
			perStep[op] = d
		}
	}
	t.Logf("AWS calls per inline step: %v; the whole 2-step invocation: %v", perStep, small)
	if perStep["DynamoDB.TransactWriteItems"] != 1 {
		t.Errorf("%.1f TransactWriteItems per inline step, want 1", perStep["DynamoDB.TransactWriteItems"])
	}
	if other := perStep["DynamoDB.PutItem"] + perStep["DynamoDB.UpdateItem"]; other != 0 {
		t.Errorf("%.1f other DynamoDB writes per inline step, want none (the lease costs a write per invocation, not per step)", other)
	}
	if msgs := perStep["SQS.SendMessage"]; msgs > 0 {
		t.Errorf("%.1f SQS messages per inline step, want none", msgs)
	}
	// Three UpdateItem per invocation: closing the run's stream index at
	// its end and stamping its expiry, and acquiring the run's lease. An
	// invocation that finishes the run leaves the lease to lapse rather
	// than pay a release.
	if n := small["DynamoDB.UpdateItem"]; n != 3 {
		t.Errorf("%d UpdateItem in an invocation that finishes its run, want 3 (the stream index and its expiry, the lease)", n)
	}
}

var awsWaiter = workflow.Define("aws-test.waiter", func(ctx workflow.Context, token string) (string, error) {
	return workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
})

// suspendedWaiter starts an awsWaiter on a token named after prefix and
// drives it, on a worker of its own, until it waits on the hook.
func suspendedWaiter(t *testing.T, ctx context.Context, w *World, prefix string) (*workflow.Run[string], string) {
	t.Helper()
	token := fmt.Sprint(prefix, time.Now().UnixNano())
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsWaiter, token)
	if err != nil {
		t.Fatal(err)
	}
	if err := workflow.NewWorker(w, workflow.WorkerOptions{}).Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	return run, token
}

// The lease's cost to an invocation that suspends: one UpdateItem to
// acquire the lease and one to release it, whatever the invocation does.
func TestLeaseCallsPerInvocation(t *testing.T) {
	w := newTestWorld(t)
	ctx := context.Background()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	token := fmt.Sprint("aws-test-lease:", time.Now().UnixNano())
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsWaiter, token)
	if err != nil {
		t.Fatal(err)
	}
	w.ResetCalls()
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	calls := w.Calls()
	t.Logf("AWS calls of an invocation that claims a hook and suspends: %v", calls)
	if n := calls["DynamoDB.UpdateItem"]; n != 2 {
		t.Errorf("%d UpdateItem, want 2: acquire and release the lease", n)
	}

	// A delivery while another invocation holds the lease reads the run,
	// is refused the lease and queues its message again: no log read. It
	// brings news (a resume), or the worker, which suspended the run with
	// nothing new since, would drop it after the run read.
	if err := workflow.ResumeHook(ctx, workflow.NewClient(w), token, "news"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(ctx, run.ID, world.Lease{Owner: "holder", Until: time.Now().Add(time.Minute)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	w.ResetCalls()
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	deferred := w.Calls()
	t.Logf("AWS calls of a delivery deferred to the lease's holder: %v", deferred)
	if deferred["DynamoDB.Query"] != 1 || deferred["SQS.SendMessage"] != 1 {
		t.Errorf("a deferred delivery made %v, want one run read and one message", deferred)
	}
}
