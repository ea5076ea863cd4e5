package workflow_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var warmAdd = workflow.DefineStep("test.warm.add", func(ctx context.Context, n int) (int, error) { return n + 1, nil })

// warmHistory runs n steps, then adds up the numbers sent to its hook,
// each through a step, until it is sent a negative one.
var warmHistory = workflow.Define("test.warm.history", func(ctx workflow.Context, n int) (int, error) {
	for i := range n {
		if _, err := warmAdd.Call(ctx, i); err != nil {
			return 0, err
		}
	}
	h := workflow.CreateHook[int](ctx, workflow.WithToken("warm:"+ctx.RunID()))
	total := 0
	for {
		v, err := h.Receive(ctx)
		if err != nil || v < 0 {
			return total, err
		}
		got, err := warmAdd.Call(ctx, v)
		if err != nil {
			return 0, err
		}
		total += got
	}
})

// eventCounter is the memory World, counting the events its log reads
// return.
type eventCounter struct {
	*memory.World
	read atomic.Int64
}

func (w *eventCounter) Events(ctx context.Context, runID string, after int64) ([]world.Event, error) {
	evs, err := w.World.Events(ctx, runID, after)
	w.read.Add(int64(len(evs)))
	return evs, err
}

// eventsReadPerResume starts a run with a history of steps, drives it to
// its hook, then resumes it three times and returns the events the
// worker read for each resume, and the history's length before them.
func eventsReadPerResume(t *testing.T, steps int, opts workflow.WorkerOptions) (perResume []int64, history int64) {
	t.Helper()
	ctx := t.Context()
	w := &eventCounter{World: memory.New()}
	worker := workflow.NewWorker(w, opts)
	c := workflow.NewClient(w)
	run, err := workflow.Start(ctx, c, warmHistory, steps)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	info, err := w.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := range 3 {
		if err := workflow.ResumeHook(ctx, c, "warm:"+run.ID, i); err != nil {
			t.Fatal(err)
		}
		want += i + 1
		w.read.Store(0)
		if err := worker.Process(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		perResume = append(perResume, w.read.Load())
	}
	if err := workflow.ResumeHook(ctx, c, "warm:"+run.ID, -1); err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := run.Result(ctx); err != nil || got != want {
		t.Fatalf("Result = %d, %v; want %d", got, err, want)
	}
	return perResume, info.LastSlot
}

// A warm worker reads only what was appended since it suspended the run:
// as many events per resume after 2,000 events as after 10, where a
// worker with nothing warm reads the whole log each time.
func TestWarmResumeReadsOnlyTheTail(t *testing.T) {
	short, shortLen := eventsReadPerResume(t, 2, workflow.WorkerOptions{})
	long, longLen := eventsReadPerResume(t, 666, workflow.WorkerOptions{})
	if shortLen > 20 || longLen < 2000 {
		t.Fatalf("histories of %d and %d events, want about 10 and 2,000", shortLen, longLen)
	}
	if fmt.Sprint(short) != fmt.Sprint(long) {
		t.Errorf("events read per resume: %v after %d events, %v after %d; want the same", short, shortLen, long, longLen)
	}
	for _, n := range long {
		if n > 2 {
			t.Errorf("a warm resume read %d events (%v), want only the hook's message", n, long)
		}
	}
	cold, _ := eventsReadPerResume(t, 666, workflow.WorkerOptions{WarmRuns: -1})
	for _, n := range cold {
		if n < longLen {
			t.Errorf("a resume without the warm cache read %d events (%v), want the whole log", n, cold)
		}
	}
}

// beatsAfter is a step that leaves a goroutine behind it which keeps
// beating with the step's context until the test that set stopBeats
// closes it, as a careless step might.
var (
	stopBeats  chan struct{}
	beatsAfter = workflow.DefineStep("test.warm.beats_after", func(ctx context.Context, n int) (int, error) {
		stop := stopBeats
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = workflow.Heartbeat(ctx, i)
			}
		}()
		return n, nil
	})
	beatThenWait = workflow.Define("test.warm.beat_then_wait", func(ctx workflow.Context, _ int) (int, error) {
		if _, err := beatsAfter.Call(ctx, 1); err != nil {
			return 0, err
		}
		h := workflow.CreateHook[int](ctx, workflow.WithToken("warm-beat:"+ctx.RunID()))
		total := 0
		for range 2 {
			v, err := h.Receive(ctx)
			if err != nil {
				return 0, err
			}
			total += v
		}
		return total, nil
	})
)

// A parked run lets go of what only a delivery uses (its step channels
// among them), while a step's stray goroutine may still beat: under the
// race detector, that beat must not touch the parked run, and the run
// resumes warm and finishes as if nothing beat.
func TestAStrayHeartbeatLeavesAParkedRunAlone(t *testing.T) {
	stopBeats = make(chan struct{})
	defer close(stopBeats)
	ctx := t.Context()
	w := &eventCounter{World: memory.New()}
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	c := workflow.NewClient(w)
	run, err := workflow.Start(ctx, c, beatThenWait, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{2, 3} {
		if err := workflow.ResumeHook(ctx, c, "warm-beat:"+run.ID, v); err != nil {
			t.Fatal(err)
		}
		w.read.Store(0)
		if err := worker.Process(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if n := w.read.Load(); n > 2 {
			t.Errorf("the resume read %d events, want only the hook's message (a warm resume)", n)
		}
	}
	if got, err := run.Result(ctx); err != nil || got != 5 {
		t.Fatalf("Result = %d, %v; want 5", got, err)
	}
}
