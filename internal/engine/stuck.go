package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// The stuck-run check: a run that has not finished, whose lease is free,
// and whose next move (world.Overdue) is overdue by a threshold has
// nothing moving it. It lost its message: dead-lettered, or never sent by
// a writer that died after its write. The check re-queues such a run once;
// one still overdue a threshold later with the same log fails with
// ErrStuck. Any number of checks may run at once: each step is a
// conditional write.

// ErrStuck is the cause of a run the stuck-run check failed. Users match
// it as workflow.ErrRunStuck, the same value.
var ErrStuck = errors.New("workflow: run stuck: nothing moved it on, not even a re-queue of its message")

// DefaultStuckAfter is how long a run may be overdue with nothing moving
// it before the check re-queues it, and after that, fails it. It outlasts
// a queue's redeliveries of a failing message (the flow function's
// visibility timeout, several times) and a lease's lapse by far.
const DefaultStuckAfter = 15 * time.Minute

// stuckBatch bounds the runs one check handles; the next check takes the
// rest.
const stuckBatch = 500

// StuckReport is what one check did.
type StuckReport struct {
	Requeued []string // runs re-queued
	Failed   []string // runs failed with ErrStuck
	// More says that the check stopped at its batch: more overdue runs
	// wait for the next one.
	More bool
}

// CheckStuck re-queues the runs overdue by after with nothing moving them,
// and fails those it re-queued before that are still so. It reckons by the
// engine's clock.
func (e *Engine) CheckStuck(ctx context.Context, after time.Duration) (StuckReport, error) {
	now := e.now()
	runs, err := e.World.OverdueRuns(ctx, now.Add(-after), now, stuckBatch)
	if err != nil {
		return StuckReport{}, fmt.Errorf("check for stuck runs: %w", err)
	}
	report := StuckReport{More: len(runs) == stuckBatch}
	var errs []error
	for _, r := range runs {
		if r.Requeued {
			failed, err := e.failStuck(ctx, r, now, after)
			if failed {
				report.Failed = append(report.Failed, r.RunID)
			}
			errs = append(errs, err)
			continue
		}
		requeued, err := e.requeueStuck(ctx, r, now)
		if requeued {
			report.Requeued = append(report.Requeued, r.RunID)
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return report, fmt.Errorf("check for stuck runs: %w", err)
	}
	return report, nil
}

// requeueStuck queues a message for an overdue run, then marks it
// re-queued, on condition that it has not moved. The message goes first:
// a check that dies between the two re-queues the run again next time,
// instead of failing a run it never re-queued.
func (e *Engine) requeueStuck(ctx context.Context, r world.OverdueRun, now time.Time) (bool, error) {
	if err := enqueue(ctx, e.World, world.Message{RunID: r.RunID}); err != nil {
		return false, err
	}
	err := e.World.MarkRequeued(ctx, r, now)
	if errors.Is(err, world.ErrNotOverdue) || errors.Is(err, world.ErrRunNotFound) {
		return false, nil // it moved meanwhile: the message costs one idle delivery
	}
	if err != nil {
		return false, err
	}
	e.logger().WarnContext(ctx, "workflow: run stuck: nothing moved it since it was due; re-queued it",
		logRunID, r.RunID, "due", r.Due.UTC().Format(time.RFC3339), "last_slot", r.LastSlot)
	return true, nil
}

// failStuck fails a run the check re-queued that is still overdue. It
// takes the run's lease first, so that no invocation starts while it
// decides, and fails the run only if its log is still the one that was
// found overdue.
func (e *Engine) failStuck(ctx context.Context, r world.OverdueRun, now time.Time, after time.Duration) (bool, error) {
	owner := "stuck-check_" + rand.Text()
	_, err := e.World.AcquireLease(ctx, r.RunID, world.Lease{Owner: owner, Until: now.Add(e.leaseTTL())}, now)
	if errors.Is(err, world.ErrLeaseHeld) {
		return false, nil // an invocation took it: it moves
	}
	if err != nil {
		return false, err
	}
	events, err := e.World.Events(ctx, r.RunID, 0)
	if err != nil || int64(len(events)) != r.LastSlot {
		// It moved since it was found, or its log cannot be read: leave
		// it be, due now.
		_, rerr := e.World.ReleaseLease(ctx, r.RunID, world.Release{Owner: owner, Seen: int64(len(events))})
		return false, errors.Join(err, rerr)
	}
	cause := fmt.Errorf("%w: re-queued at %s, it had not moved %s later (its log ends at slot %d)",
		ErrStuck, r.Due.UTC().Format(time.RFC3339), after, r.LastSlot)
	encoded := e.Errors.Encode(cause)
	ev := world.Event{Type: world.RunFailed, Payload: mustJSON(runFinishedPayload{Error: encoded}), CreatedAt: now}
	err = endFromOutside(ctx, e.World, r.RunID, events, ev, &world.RunUpdate{Status: world.StatusFailed, Error: encoded})
	if errors.Is(err, world.ErrRunFinished) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	e.logger().ErrorContext(ctx, "workflow: run stuck: failed it, since re-queueing it did not move it", logRunID, r.RunID, "err", cause)
	return true, nil
}
