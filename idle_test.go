package workflow_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// logReads is a World that counts reads of run logs, and stream closes.
type logReads struct {
	*memory.World
	n      atomic.Int64
	closes atomic.Int64
}

func (l *logReads) Events(ctx context.Context, runID string, after int64) ([]world.Event, error) {
	l.n.Add(1)
	return l.World.Events(ctx, runID, after)
}

func (l *logReads) CloseStream(ctx context.Context, name string) error {
	l.closes.Add(1)
	return l.World.CloseStream(ctx, name)
}

var waiter = workflow.Define("test.waiter", func(ctx workflow.Context, token string) (string, error) {
	return workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
})

// A delivery for a run that waits on a hook, when nothing reached its log
// since it suspended (a duplicate message, or the rest of a burst of
// resumes one invocation already took in), skips reading and replaying the
// log; the next resume is acted on as usual.
func TestNothingNewSkipsReplay(t *testing.T) {
	ctx := context.Background()
	w := &logReads{World: memory.New()}
	c := workflow.NewClient(w)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	run, err := workflow.Start(ctx, c, waiter, "idle")
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	before := w.n.Load()
	for range 3 { // duplicate deliveries
		if err := worker.Process(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.n.Load() - before; n != 0 {
		t.Errorf("deliveries with nothing new read the log %d times, want none", n)
	}
	if err := workflow.ResumeHook(ctx, c, "idle", "now"); err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := run.Result(ctx); err != nil || got != "now" {
		t.Fatalf("Result = %q, %v after a resume; want \"now\"", got, err)
	}
}

// A delivery for a run that ended, once this process saw its end through
// (streams closed, hooks and slot released), has nothing left to do: it
// neither reads the log nor closes the run's streams again. After a
// hundred callers of one responding hook, the wake-ups still queued would
// otherwise each close the hundred reply streams.
func TestEndedRunIsSeenThroughOnce(t *testing.T) {
	ctx := context.Background()
	w := &logReads{World: memory.New()}
	c := workflow.NewClient(w)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	run, err := workflow.Start(ctx, c, waiter, "ended")
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := workflow.ResumeHook(ctx, c, "ended", "now"); err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := run.Result(ctx); err != nil || got != "now" {
		t.Fatalf("Result = %q, %v; want \"now\"", got, err)
	}
	if w.closes.Load() == 0 {
		t.Fatal("the run's end closed no stream; this test no longer sees the end's work")
	}
	reads, closes := w.n.Load(), w.closes.Load()
	for range 3 { // the wake-ups of a burst of resumes, left in the queue
		if err := worker.Process(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.n.Load() - reads; n != 0 {
		t.Errorf("deliveries for the ended run read its log %d times, want none", n)
	}
	if n := w.closes.Load() - closes; n != 0 {
		t.Errorf("deliveries for the ended run closed %d streams, want none", n)
	}
}
