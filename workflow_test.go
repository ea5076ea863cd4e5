package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

var double = workflow.DefineStep("test.double", func(ctx context.Context, n int) (int, error) { return 2 * n, nil })

var fanOut = workflow.Define("test.fanout", func(ctx workflow.Context, n int) (int, error) {
	var fs []workflow.Future[int]
	for i := range n {
		fs = append(fs, double.Go(ctx, i))
	}
	vals, err := workflow.Gather(ctx, fs...)
	sum := 0
	for _, v := range vals {
		sum += v
	}
	return sum, err
})

func TestFanOutJoinsEveryBranch(t *testing.T) {
	env := workflowtest.New(t)
	got, err := workflowtest.Start(env, fanOut, 64).Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := 64 * 63; got != want {
		t.Fatalf("sum = %d, want %d", got, want)
	}
}

var sleeper = workflow.Define("test.sleeper", func(ctx workflow.Context, _ struct{}) (time.Duration, error) {
	start := workflow.Now(ctx)
	workflow.Sleep(ctx, 30*24*time.Hour)
	return workflow.Now(ctx).Sub(start), nil
})

func TestThirtyDaySleepSkipsTime(t *testing.T) {
	env := workflowtest.New(t)
	begin := time.Now()
	run := workflowtest.Start(env, sleeper, struct{}{})
	slept, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if slept < 30*24*time.Hour {
		t.Fatalf("workflow saw %v pass, want at least 30 days", slept)
	}
	if real := time.Since(begin); real > 5*time.Second {
		t.Fatalf("a skipped sleep took %v of real time", real)
	}
}

var flakyCalls atomic.Int32

var flaky = workflow.DefineStep("test.flaky", func(ctx context.Context, failures int) (int, error) {
	info, _ := workflow.GetStepInfo(ctx)
	flakyCalls.Add(1)
	if info.Attempt <= failures {
		return 0, fmt.Errorf("attempt %d: transient", info.Attempt)
	}
	return info.Attempt, nil
})

var retrying = workflow.Define("test.retrying", func(ctx workflow.Context, failures int) (int, error) {
	return flaky.Call(ctx, failures)
})

func TestStepRetriesUntilSuccessAndSeesItsAttempt(t *testing.T) {
	env := workflowtest.New(t)
	flakyCalls.Store(0)
	got, err := workflowtest.Start(env, retrying, 2).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got != 3 || flakyCalls.Load() != 3 {
		t.Fatalf("succeeded on attempt %d after %d calls, want 3 and 3", got, flakyCalls.Load())
	}
}

func TestStepGivesUpAfterDefaultRetries(t *testing.T) {
	env := workflowtest.New(t)
	flakyCalls.Store(0)
	_, err := workflowtest.Start(env, retrying, 100).Result()
	var stepErr *workflow.StepError
	if !errors.As(err, &stepErr) || stepErr.Attempts != 4 {
		t.Fatalf("err = %v, want a StepError after 4 attempts", err)
	}
	if !errors.Is(err, workflow.ErrRunFailed) || flakyCalls.Load() != 4 {
		t.Fatalf("err = %v after %d calls", err, flakyCalls.Load())
	}
	if !strings.Contains(err.Error(), "attempt 4: transient") {
		t.Fatalf("message lost: %v", err)
	}
}

var ErrDeclined = errors.New("card declined")

type LimitError struct {
	Limit int `json:"limit"`
}

func (e *LimitError) Error() string { return fmt.Sprintf("over limit %d", e.Limit) }

func init() {
	workflow.RegisterError(ErrDeclined)
	workflow.RegisterError(&LimitError{})
}

var fatalCalls atomic.Int32

var charge = workflow.DefineStep("test.charge", func(ctx context.Context, mode string) (string, error) {
	fatalCalls.Add(1)
	switch mode {
	case "declined":
		return "", workflow.Fatal(fmt.Errorf("charging: %w", ErrDeclined))
	case "limit":
		return "", workflow.Fatal(&LimitError{Limit: 500})
	case "panic":
		panic("boom")
	}
	return "ok", nil
})

var checkout = workflow.Define("test.checkout", func(ctx workflow.Context, mode string) (string, error) {
	return charge.Call(ctx, mode)
})

func TestFatalErrorKeepsKindMessageAndCause(t *testing.T) {
	env := workflowtest.New(t)
	fatalCalls.Store(0)
	_, err := workflowtest.Start(env, checkout, "declined").Result()
	var fatal *workflow.FatalError
	if !errors.As(err, &fatal) {
		t.Fatalf("err = %v: no FatalError in the chain", err)
	}
	if !errors.Is(err, ErrDeclined) || !strings.Contains(err.Error(), "charging: card declined") {
		t.Fatalf("err = %v: cause or message lost", err)
	}
	if fatalCalls.Load() != 1 {
		t.Fatalf("a fatal error was retried: %d calls", fatalCalls.Load())
	}
}

func TestRegisteredErrorTypeRevivesWithItsFields(t *testing.T) {
	env := workflowtest.New(t)
	_, err := workflowtest.Start(env, checkout, "limit").Result()
	var limit *LimitError
	if !errors.As(err, &limit) || limit.Limit != 500 {
		t.Fatalf("err = %v, want a *LimitError{500}", err)
	}
}

func TestPanicInStepIsAnError(t *testing.T) {
	env := workflowtest.New(t)
	_, err := workflowtest.Start(env, checkout, "panic").Result()
	var p *workflow.PanicError
	if !errors.As(err, &p) || p.Value != "boom" || !strings.Contains(p.Stack, "workflow_test.go") {
		t.Fatalf("err = %v, want a PanicError with a stack", err)
	}
}

var deterministic = workflow.Define("test.deterministic", func(ctx workflow.Context, _ struct{}) ([]string, error) {
	a := workflow.UUID(ctx)
	r := fmt.Sprint(workflow.RandomN(ctx, 1000000))
	if _, err := double.Call(ctx, 1); err != nil { // forces a replay boundary in between
		return nil, err
	}
	workflow.Sleep(ctx, time.Hour)
	return []string{a, r, workflow.UUID(ctx)}, nil
})

func TestRandomAndUUIDAreStableAcrossReplay(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, deterministic, struct{}{})
	first, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	// Same run ID, same seed: a fresh run with the same ID replays the same draws.
	env2 := workflowtest.New(t)
	second, err := workflowtest.Start(env2, deterministic, struct{}{}, workflow.WithRunID(run.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(first) != fmt.Sprint(second) || first[0] == first[2] {
		t.Fatalf("draws differ or repeat: %v vs %v", first, second)
	}
}

var child = workflow.Define("test.child", func(ctx workflow.Context, n int) (int, error) {
	if n < 0 {
		return 0, workflow.Fatal(errors.New("negative"))
	}
	return double.Call(ctx, n)
})

var parent = workflow.Define("test.parent", func(ctx workflow.Context, n int) (string, error) {
	c := child.StartChild(ctx, n)
	v, err := c.Get(ctx)
	if err != nil {
		return "", err
	}
	status, err := c.Handle(ctx).Status(ctx) // the same run, seen through its RunHandle
	return fmt.Sprint(c.RunID(ctx), " ", v, " ", status), err
})

func TestChildRunIsAwaitedAndTagged(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, parent, 21)
	got, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	childID, v, _ := strings.Cut(got, " ")
	if v != "42 completed" {
		t.Fatalf("child result and status %q, want 42 completed", v)
	}
	r, err := workflow.GetRun[int](context.Background(), env.Client, childID)
	if err != nil {
		t.Fatal(err)
	}
	attrs, _ := r.Attributes(context.Background())
	if attrs["$parentRunId"] != run.ID || attrs["$rootRunId"] != run.ID {
		t.Fatalf("child attributes %v", attrs)
	}
	_, err = workflowtest.Start(env, parent, -1).Result()
	var failed *workflow.RunFailedError
	if !errors.As(err, &failed) || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("child failure not surfaced: %v", err)
	}
}

func TestIdempotencyKeyReturnsTheSameRun(t *testing.T) {
	env := workflowtest.New(t)
	a := workflowtest.Start(env, child, 1, workflow.WithIdempotencyKey("order-7"))
	b := workflowtest.Start(env, child, 1, workflow.WithIdempotencyKey("order-7"))
	if a.ID != b.ID {
		t.Fatalf("two runs for one key: %s %s", a.ID, b.ID)
	}
	if _, err := a.Result(); err != nil {
		t.Fatal(err)
	}
	page, _ := env.Client.ListRuns(context.Background(), workflow.RunFilter{Workflow: "test.child"})
	if len(page.Runs) != 1 {
		t.Fatalf("%d runs listed, want 1", len(page.Runs))
	}
}

// StartChild takes Start's options: an idempotency key names the child
// run as it would a started one, and WithAttributes, which applies to
// Start only, fails the child.
var keyedParent = workflow.Define("test.keyedParent", func(ctx workflow.Context, key string) (struct{}, error) {
	c := child.StartChild(ctx, 1, workflow.WithIdempotencyKey(key))
	if _, err := c.Get(ctx); err != nil {
		return struct{}{}, err
	}
	_, err := child.StartChild(ctx, 1, workflow.WithAttributes(map[string]string{"k": "v"})).Get(ctx)
	return struct{}{}, err
})

func TestStartChildTakesStartOptions(t *testing.T) {
	env := workflowtest.New(t)
	_, err := workflowtest.Start(env, keyedParent, "order-8").Result()
	if err == nil || !strings.Contains(err.Error(), "WithAttributes applies to Start only") {
		t.Fatalf("a child started WithAttributes: %v", err)
	}
	started := workflowtest.Start(env, child, 1, workflow.WithIdempotencyKey("order-8"))
	page, _ := env.Client.ListRuns(context.Background(), workflow.RunFilter{Workflow: "test.child"})
	if len(page.Runs) != 1 || page.Runs[0].ID != started.ID {
		t.Fatalf("runs %+v: want the keyed child alone, %s", page.Runs, started.ID)
	}
}
