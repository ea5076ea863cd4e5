package world

import (
	"context"
	"errors"
	"time"
)

// A run must never stay unfinished with nothing that will move it on: no
// message queued for it, no timer set. That happens when a message is lost
// (dead-lettered after too many failed deliveries, or never sent because
// its sender died after its write). Whether a queue holds a message for a
// run cannot be told without reading the whole queue, so a World keeps, on
// the item every write of the run already touches (its log head), when the
// run is next due to move, and the engine's check (engine.CheckStuck)
// looks for runs long past it:
//
//   - a run's creation and every append from outside the run
//     (AppendEvents: a hook resume, a cancellation, a child's result) make
//     it due now, since each is followed by a message;
//   - the release of the run's lease makes it due when the releasing
//     invocation says (Release): at the earliest timer or retry it queued
//     a wake-up for, never if only a hook or a child can move the run on
//     (a run waiting for a person is rightly idle for weeks), now if it
//     handed the run off or failed, and now in any case if the log grew
//     past what the releaser saw;
//   - appends under the lease (an invocation's own steps) leave it alone,
//     so the hot path writes nothing more: a held lease says the run moves;
//   - the write that finishes a run clears it.
//
// A run due before now minus the check's threshold whose lease is free
// has nothing moving it. The check re-queues it once (MarkRequeued), and
// fails it if, a threshold later, it is still overdue with the same log.

// Release is what ReleaseLease is told by the invocation that lets a run go.
type Release struct {
	// Owner is the lease's holder.
	Owner string
	// Seen is the last slot the releaser applied: if the log is longer,
	// events came in that nobody has acted on yet, and the run is due now.
	Seen int64
	// Suspended says the releaser suspended the run: it queued a wake-up
	// for each timer and retry, and Wake is the earliest (zero: none, only
	// a hook or a child moves the run on). Otherwise it gave the run up
	// unfinished (out of time, or failed), its hand-off or its message's
	// redelivery moves the run on, and the run is due now.
	Suspended bool
	Wake      time.Time
}

// OverdueRun is a run whose next move is overdue, as a World saw it.
type OverdueRun struct {
	RunID string
	// LastSlot is the slot of the run's last event.
	LastSlot int64
	// Due is when the run was due to move.
	Due time.Time
	// Requeued says that MarkRequeued marked the run at LastSlot and
	// nothing released its lease since: a re-queue did not help.
	Requeued bool
}

// ErrNotOverdue says that a run moved since it was found overdue.
var ErrNotOverdue = errors.New("world: run is no longer overdue")

// Overdue finds the runs whose next move is overdue: a World keeps when
// each run is next due, and its ReleaseLease records it.
type Overdue interface {
	// OverdueRuns returns up to limit unfinished runs due before before
	// whose lease is free at now (nobody holds it, or its Until is not
	// after now), oldest due first.
	OverdueRuns(ctx context.Context, before, now time.Time, limit int) ([]OverdueRun, error)
	// MarkRequeued records that the check re-queued run: if the run's
	// last slot and due time are still run's and its lease is free at
	// now, it becomes due at now, marked Requeued at its last slot until a
	// release of its lease by a suspending invocation. Otherwise nothing
	// changes and the error matches ErrNotOverdue (ErrRunNotFound for a
	// run that is gone).
	MarkRequeued(ctx context.Context, run OverdueRun, now time.Time) error
}
