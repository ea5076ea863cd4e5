package local

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

var speakStep = workflow.DefineStep("local.speak", func(ctx context.Context, s string) (string, error) {
	w, err := workflow.Writer[string](ctx, "")
	if err != nil {
		return "", err
	}
	return s, w.Write(s)
})

var speakFlow = workflow.Define("local.speak", func(ctx workflow.Context, s string) (string, error) {
	return speakStep.Call(ctx, s)
})

// TestRunEndSyncsNothing runs a workflow whose step writes to its stream
// on a full-sync World and waits, reading unsynced, until the worker has
// closed the stream, the last of its work at the run's end: the start's
// acknowledgement is the only fsync. The worker reads the run's end and
// its stream index unsynced (world.UnsyncedReader) and writes nothing it
// acknowledges, so the end is still not durable when a client first reads
// it, and that read syncs.
func TestRunEndSyncsNothing(t *testing.T) {
	var syncs atomic.Int64
	w, err := Open(t.TempDir(), WithFullSync(), countingSyncs(&syncs))
	check(t, "Open", err)
	defer w.Close()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go func() {
		_ = workflow.NewWorker(w, workflow.WorkerOptions{Logger: slog.New(slog.DiscardHandler)}).Run(ctx)
	}()
	before := syncs.Load()
	run, err := workflow.Start(ctx, workflow.NewClient(w), speakFlow, "hi")
	check(t, "Start", err)

	stream := engine.RunStream(run.ID, "")
	for {
		_, closed, err := w.ReadStreamUnsynced(ctx, stream, 0)
		check(t, "ReadStreamUnsynced", err)
		if closed {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the run's stream was never closed")
		case <-time.After(time.Millisecond):
		}
	}
	if n := syncs.Load() - before; n != 1 {
		t.Fatalf("a run from its start to the worker's work at its end made %d fsyncs, want 1 (the start's)", n)
	}
	r, err := w.GetRun(ctx, run.ID)
	check(t, "GetRun", err)
	if r.Status != world.StatusCompleted {
		t.Fatalf("the run is %s", r.Status)
	}
	if n := syncs.Load() - before; n != 2 {
		t.Fatalf("the client's read of the end made %d fsyncs, want 1", n-1)
	}
}
