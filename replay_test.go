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
	"github.com/lambdaworkflow/workflow/world/memory"
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

func TestHookTokenConflictNamesTheOwner(t *testing.T) {
	env := workflowtest.New(t)
	first := workflowtest.Start(env, approval, "dup")
	env.RunUntilIdle()
	second := workflowtest.Start(env, approval, "dup")
	_, err := second.Result()
	var conflict *workflow.HookConflictError
	if !errors.As(err, &conflict) || conflict.OwnerRunID != first.ID || !errors.Is(err, workflow.ErrHookConflict) {
		t.Fatalf("err = %v, want a conflict naming %s", err, first.ID)
	}
}

func TestResumeUnknownTokenIsNotFound(t *testing.T) {
	env := workflowtest.New(t)
	err := workflow.ResumeHook(context.Background(), env.Client, "nobody", 1)
	if !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("err = %v", err)
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

var endless = workflow.Define("test.endless", func(ctx workflow.Context, _ struct{}) (int, error) {
	for i := 0; ; i++ {
		if _, err := double.Call(ctx, i); err != nil {
			return 0, err
		}
	}
})

func TestEventLimitFailsTheRun(t *testing.T) {
	env := workflowtest.New(t, workflowtest.MaxEvents(50))
	run := workflowtest.Start(env, endless, struct{}{})
	_, err := run.Result()
	if !errors.Is(err, workflow.ErrMaxEventsExceeded) {
		t.Fatalf("err = %v, want ErrMaxEventsExceeded", err)
	}
	if n := len(run.Events()); n > 51 {
		t.Fatalf("log grew to %d events past a limit of 50", n)
	}
}

var stepSawCancel = make(chan error, 1)
var stepStarted = make(chan struct{}, 1)

var blocking = workflow.DefineStep("test.blocking", func(ctx context.Context, _ struct{}) (int, error) {
	stepStarted <- struct{}{}
	<-ctx.Done()
	stepSawCancel <- ctx.Err()
	return 0, ctx.Err()
})

var cancellable = workflow.Define("test.cancellable", func(ctx workflow.Context, _ struct{}) (int, error) {
	return blocking.Call(ctx, struct{}{})
})

func TestCancelReachesARunningStep(t *testing.T) {
	w := memory.New()
	c := workflow.NewClient(w)
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	run, err := workflow.Start(ctx, c, cancellable, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	<-stepStarted
	if err := run.Cancel(ctx, "customer changed their mind"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stepSawCancel:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("step context ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the running step never saw the cancellation")
	}
	_, err = run.Result(ctx)
	var cancelled *workflow.RunCancelledError
	if !errors.As(err, &cancelled) || cancelled.Reason != "customer changed their mind" || !errors.Is(err, workflow.ErrRunCancelled) {
		t.Fatalf("err = %v", err)
	}
	if err := run.Cancel(ctx, "again"); !errors.Is(err, workflow.ErrRunFinished) {
		t.Fatalf("cancelling twice: %v", err)
	}
}
