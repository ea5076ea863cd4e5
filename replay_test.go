package workflow_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
)

var counted atomic.Int32

var count = workflow.DefineStep("test.count", func(ctx context.Context, n int) (int, error) {
	counted.Add(1)
	return n, nil
})

var approval = workflow.Define("test.approval", func(ctx workflow.Context, id string) (string, error) {
	defer func() { _, _ = count.Call(ctx, 99) }() // must not run while the run suspends
	if _, err := count.Call(ctx, 1); err != nil {
		return "", err
	}
	h := workflow.CreateHook[string](ctx, workflow.WithToken("approval:"+id))
	defer h.Dispose(ctx)
	decision, err := h.Receive(ctx)
	if err != nil {
		return "", err
	}
	_, err = count.Call(ctx, 2)
	return decision, err
})

func stepInputs(evs []world.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == world.StepCreated {
			out = append(out, string(ev.Payload))
		}
	}
	return out
}

func TestHookResumeReplaysWithoutRerunningSteps(t *testing.T) {
	env := workflowtest.New(t)
	counted.Store(0)
	run := workflowtest.Start(env, approval, "a1")
	env.RunUntilIdle()
	if s := run.Status(); s != workflow.StatusRunning {
		t.Fatalf("status %s while waiting on the hook", s)
	}
	if in := stepInputs(run.Events()); len(in) != 1 {
		t.Fatalf("the suspended run's defers did durable work: %v", in)
	}
	if err := workflow.ResumeHook(context.Background(), env.Client, "approval:a1", "yes"); err != nil {
		t.Fatal(err)
	}
	got, err := run.Result()
	if err != nil || got != "yes" {
		t.Fatalf("got %q, %v", got, err)
	}
	if n := counted.Load(); n != 3 {
		t.Fatalf("steps ran %d times, want 3 (1, 2 and the deferred 99)", n)
	}
	if err := workflow.ResumeHook(context.Background(), env.Client, "approval:a1", "again"); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("resuming a finished run's hook: %v, want ErrHookNotFound", err)
	}
}

var race = workflow.Define("test.race", func(ctx workflow.Context, _ struct{}) (int, error) {
	h := workflow.CreateHook[int](ctx)
	return workflow.Select(ctx, h, workflow.After(ctx, time.Hour)), nil
})

func TestSelectTimerBeatsSilentHook(t *testing.T) {
	env := workflowtest.New(t)
	got, err := workflowtest.Start(env, race, struct{}{}).Result()
	if err != nil || got != 1 {
		t.Fatalf("got %d, %v; want the timer (1)", got, err)
	}
}

var coroutines = workflow.Define("test.coroutines", func(ctx workflow.Context, _ struct{}) ([]int, error) {
	branch := func(n int) workflow.Future[int] {
		return workflow.Go(ctx, func(ctx workflow.Context) (int, error) {
			workflow.Sleep(ctx, time.Duration(n)*time.Minute)
			return double.Call(ctx, n)
		})
	}
	return workflow.Gather(ctx, branch(3), branch(1), branch(2))
})

func TestCoroutinesMixStepsAndSleeps(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, coroutines, struct{}{})
	got, err := run.Result()
	if err != nil || len(got) != 3 || got[0] != 6 || got[1] != 2 || got[2] != 4 {
		t.Fatalf("got %v, %v\n%s", got, err, run.Timeline())
	}
}

var nondetMode atomic.Bool

var drifting = workflow.Define("test.drifting", func(ctx workflow.Context, _ struct{}) (int, error) {
	if nondetMode.Load() {
		workflow.Sleep(ctx, time.Second)
	} else if _, err := double.Call(ctx, 1); err != nil {
		return 0, err
	}
	h := workflow.CreateHook[int](ctx, workflow.WithToken("drift"))
	return h.Receive(ctx)
})

func TestNondeterminismNamesExpectedFoundAndCallSite(t *testing.T) {
	env := workflowtest.New(t)
	nondetMode.Store(false)
	run := workflowtest.Start(env, drifting, struct{}{})
	env.RunUntilIdle()
	nondetMode.Store(true) // the code changes while the run waits
	defer nondetMode.Store(false)
	if err := workflow.ResumeHook(context.Background(), env.Client, "drift", 1); err != nil {
		t.Fatal(err)
	}
	_, err := run.Result()
	var nd *workflow.NondeterminismError
	if !errors.As(err, &nd) {
		t.Fatalf("err = %v, want a NondeterminismError", err)
	}
	// The error came back from the run's stored error as the root
	// package's own type, its fields intact.
	if nd.RunID != run.ID || nd.Slot < 2 || !strings.Contains(nd.Expected, `step "test.double"`) ||
		!strings.Contains(nd.Found, "sleep(1s)") || !strings.Contains(nd.Found, "replay_test.go:") {
		t.Errorf("NondeterminismError fields = %+v", *nd)
	}
	if !strings.Contains(err.Error(), nd.Error()) {
		t.Errorf("error %q does not carry %q", err, nd.Error())
	}
}

// driftingParent waits for a drifting child: the child's failure crosses
// a second log (the parent's) before anyone reads it.
var driftingParent = workflow.Define("test.driftingParent", func(ctx workflow.Context, _ struct{}) (int, error) {
	return drifting.StartChild(ctx, struct{}{}).Get(ctx)
})

func TestNondeterminismInAChildReachesTheParentsCaller(t *testing.T) {
	env := workflowtest.New(t)
	nondetMode.Store(false)
	run := workflowtest.Start(env, driftingParent, struct{}{})
	env.RunUntilIdle()
	nondetMode.Store(true)
	defer nondetMode.Store(false)
	if err := workflow.ResumeHook(context.Background(), env.Client, "drift", 1); err != nil {
		t.Fatal(err)
	}
	_, err := run.Result()
	var failed *workflow.RunFailedError
	var nd *workflow.NondeterminismError
	if !errors.As(err, &failed) || failed.RunID != run.ID || !errors.As(err, &nd) {
		t.Fatalf("err = %v, want the parent's RunFailedError wrapping the child's NondeterminismError", err)
	}
	if nd.RunID == run.ID || nd.Slot < 2 || !strings.Contains(nd.Found, "sleep(1s)") {
		t.Errorf("the child's NondeterminismError after two logs = %+v", *nd)
	}
}
