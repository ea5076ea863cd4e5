package workflow_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// logReads is a World that counts reads of run logs.
type logReads struct {
	*memory.World
	n atomic.Int64
}

func (l *logReads) Events(ctx context.Context, runID string, after int64) ([]world.Event, error) {
	l.n.Add(1)
	return l.World.Events(ctx, runID, after)
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
