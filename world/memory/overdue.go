package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// dueState is when a run is next due to move (see world.Overdue).
type dueState struct {
	at       time.Time // zero: never (a hook or a child moves it)
	requeued bool      // MarkRequeued marked it at slot mark
	mark     int64
}

// release records a lease's release at a log of last slots, at now.
func (d *dueState) release(r world.Release, last int64, now time.Time) {
	switch {
	case last > r.Seen || !r.Suspended:
		d.at = now
	default:
		*d = dueState{at: r.Wake}
	}
}

// movable reports whether nothing moves the run at now: it has not
// finished, and nobody holds its lease.
func (rs *runState) movable(now time.Time) bool {
	free := rs.lease.Owner == "" || !rs.lease.Until.After(now)
	return free && !rs.run.Status.Terminal()
}

func (rs *runState) overdue(before, now time.Time) bool {
	return !rs.due.at.IsZero() && rs.due.at.Before(before) && rs.movable(now)
}

// OverdueRuns implements world.Overdue.
func (w *World) OverdueRuns(_ context.Context, before, now time.Time, limit int) ([]world.OverdueRun, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var found []world.OverdueRun
	for _, id := range w.order {
		rs := w.runs[id]
		if !rs.overdue(before, now) {
			continue
		}
		found = append(found, world.OverdueRun{
			RunID: id, LastSlot: rs.run.LastSlot, Due: rs.due.at,
			Requeued: rs.due.requeued && rs.due.mark == rs.run.LastSlot,
		})
	}
	slices.SortStableFunc(found, func(a, b world.OverdueRun) int { return a.Due.Compare(b.Due) })
	return found[:min(len(found), limit)], nil
}

// MarkRequeued implements world.Overdue.
func (w *World) MarkRequeued(_ context.Context, run world.OverdueRun, now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, ok := w.runs[run.RunID]
	if !ok {
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, world.ErrRunNotFound)
	}
	if !rs.movable(now) || rs.run.LastSlot != run.LastSlot || rs.due.at.IsZero() || !rs.due.at.Equal(run.Due) {
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, world.ErrNotOverdue)
	}
	rs.due = dueState{at: now, requeued: true, mark: run.LastSlot}
	return nil
}
