package workflow

import (
	"context"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// ErrRunStuck is the cause of a run that [Worker.CheckStuck] failed: it
// was overdue with nothing to move it on (its message was lost), and
// re-queueing it did not move it either.
var ErrRunStuck = engine.ErrStuck

// StuckReport is what one [Worker.CheckStuck] did.
type StuckReport struct {
	Requeued []string // IDs of the runs it re-queued
	Failed   []string // IDs of the runs it failed with ErrRunStuck
	// More says that it stopped at its batch (500 runs): the next check
	// takes the rest.
	More bool
}

// CheckStuck finds the runs overdue by after (0: WorkerOptions.StuckAfter,
// default 15 min) with nothing to move them on, re-queues each once, and
// fails with [ErrRunStuck] each it re-queued before that is still overdue
// with the same log. A run is overdue when its next move was due (its
// creation or a resume, its timer, its retry, a failed delivery's retry)
// and no invocation holds it; a run waiting only for a hook or a child is
// never overdue. The World keeps when each run is due on the record every
// write of the run already touches, so no queue is read
// (docs/architecture/runs.md, "Stuck runs"). after should outlast the queue's
// visibility timeout, so that a failed delivery is retried before its run
// counts as stuck.
//
// Run checks by itself; a serverless deployment calls CheckStuck on a
// schedule (the flow function does on AWS). Checks may overlap.
func (w *Worker) CheckStuck(ctx context.Context, after time.Duration) (StuckReport, error) {
	if after <= 0 {
		after = w.w.StuckAfter
	}
	if after <= 0 { // Run does not check, but the threshold stays
		after = engine.DefaultStuckAfter
	}
	r, err := w.w.Engine.CheckStuck(ctx, after)
	return StuckReport{Requeued: r.Requeued, Failed: r.Failed, More: r.More}, err
}
