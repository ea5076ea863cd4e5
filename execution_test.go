package workflow_test

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var slow = workflow.DefineStep("test.slow", func(ctx context.Context, n int) (int, error) {
	select {
	case <-time.After(120 * time.Millisecond):
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
})

var chain = workflow.Define("test.chain", func(ctx workflow.Context, n int) (int, error) {
	sum := 0
	for i := range n {
		v, err := slow.Call(ctx, i)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
})

// An invocation with a deadline stops taking work before it and hands the
// run off through the queue; the run completes over several invocations.
func TestDeadlineHandsOffThroughTheQueue(t *testing.T) {
	w := memory.New()
	sink := &logLines{}
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Logger: slog.New(slog.NewJSONHandler(sink, nil))})
	ctx := context.Background()
	run, err := workflow.Start(ctx, workflow.NewClient(w), chain, 10)
	if err != nil {
		t.Fatal(err)
	}
	invocations := 0
	for {
		status, _ := run.Status(ctx)
		if status.Terminal() {
			break
		}
		invocations++
		if invocations > 20 {
			t.Fatal("the run never finished")
		}
		d, err := w.Receive(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		// Like a Lambda invocation: 1.2 s with the engine's 1 s minimum margin.
		ictx, cancel := context.WithTimeout(ctx, 1200*time.Millisecond)
		err = worker.Handle(ictx, d)
		cancel()
		if err != nil {
			t.Fatalf("invocation %d: %v", invocations, err)
		}
	}
	got, err := run.Result(ctx)
	if err != nil || got != 45 {
		t.Fatalf("got %d, %v", got, err)
	}
	if invocations < 3 {
		t.Fatalf("1.2 s of steps finished in %d invocations of ~0.2 s budget each: no handoff happened", invocations)
	}
	handoffs := find(sink.lines(t), "workflow: out of time; handing the run off to a fresh invocation", map[string]any{"run_id": run.ID, "level": "INFO"})
	if len(handoffs) == 0 || handoffs[0]["last_slot"] == nil {
		t.Errorf("%d hand-off lines with the last slot, want one a hand-off", len(handoffs))
	}
}

// Two workers that do not share a lock drive the same run at the same time
// (a duplicate delivery): each step's result is recorded once and the run
// ends once, with the right result.
func TestConcurrentDuplicateInvocations(t *testing.T) {
	w := memory.New()
	ctx := context.Background()
	run, err := workflow.Start(ctx, workflow.NewClient(w), chain, 6)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		worker := workflow.NewWorker(w, workflow.WorkerOptions{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if s, _ := run.Status(ctx); s.Terminal() {
					return
				}
				if err := worker.Process(ctx, run.ID); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := run.Result(ctx)
	if err != nil || got != 15 {
		t.Fatalf("got %d, %v", got, err)
	}
	evs, _ := w.Events(ctx, run.ID, 0)
	completed := map[string]int{}
	ends := 0
	for _, ev := range evs {
		switch ev.Type {
		case world.StepCompleted:
			completed[ev.CorrelationID]++
		case world.RunCompleted, world.RunFailed:
			ends++
		}
	}
	if len(completed) != 6 || ends != 1 {
		t.Fatalf("%d steps completed, %d run ends", len(completed), ends)
	}
	for id, n := range completed {
		if n != 1 {
			t.Errorf("step #%s recorded %d results", id, n)
		}
	}
}

var parked = workflow.Define("test.parked", func(ctx workflow.Context, id string) (int, error) {
	defer func() {}() // a defer that must run on unwind without blocking
	h := workflow.CreateHook[int](ctx, workflow.WithToken("parked:"+id))
	go1 := workflow.Go(ctx, func(ctx workflow.Context) (int, error) { return h.Receive(ctx) })
	return go1.Get(ctx)
})

// Suspended runs hold no goroutines beyond the warm cache's bound: the
// coroutines of every run past it are unwound.
func TestSuspendedRunsLeakNoGoroutines(t *testing.T) {
	w := memory.New()
	ctx := context.Background()
	c := workflow.NewClient(w)
	const warm = 5 // runs kept parked, with two coroutines each
	worker := workflow.NewWorker(w, workflow.WorkerOptions{WarmRuns: warm})
	var runs []*workflow.Run[int]
	before := runtime.NumGoroutine()
	for i := range 200 {
		r, err := workflow.Start(ctx, c, parked, string(rune('a'+i%26))+time.Now().Format("150405.000000000"))
		if err != nil {
			t.Fatal(err)
		}
		if err := worker.Process(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	time.Sleep(50 * time.Millisecond) // let unwound goroutines exit
	if grown := runtime.NumGoroutine() - before; grown > 2*warm+20 {
		t.Fatalf("%d goroutines more with 200 suspended runs", grown)
	}
	for _, r := range runs[:3] {
		if s, _ := r.Status(ctx); s != workflow.StatusRunning {
			t.Fatalf("run %s is %s, want waiting", r.ID, s)
		}
	}
	if err := runs[0].Cancel(ctx, "cleanup"); err != nil {
		t.Fatal(err)
	}
}
