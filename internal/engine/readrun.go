package engine

import (
	"context"

	"github.com/lambdaworkflow/workflow/world"
)

// On a world.RunReader the run and the tail of its log come in one read,
// before the lease, instead of a run read before the lease and a log read
// after it. The lease's answer says how far the log reached when it was
// taken; whatever was appended between the read and the lease (the last
// holder's final events, say) is read then, so nothing written under an
// earlier lease is missed, which is why other Worlds read after leasing.

// earlyLog is the tail of a run's log read with the run: its events at
// slots after+1..upTo, as stored (sealed, for a sealed run), and the
// messages then waiting in the run's inbox.
type earlyLog struct {
	after  int64
	events []world.Event
	upTo   int64
	inbox  []world.InboxMessage
}

// readRun reads the run and, on a world.RunReader, the tail of its log
// after the slot of the invocation this process parked for it, if any
// (the whole log otherwise).
func (e *Engine) readRun(ctx context.Context, runID string) (world.Run, *earlyLog, error) {
	rr := e.caps().runReader
	if rr == nil {
		run, err := e.World.GetRun(ctx, runID)
		return run, nil, err
	}
	after := e.warm.slot(runID)
	run, events, inbox, complete, err := rr.ReadRun(ctx, runID, after)
	if err != nil || !complete {
		return run, nil, err // a long tail is read after the lease, if at all
	}
	early := &earlyLog{after: after, events: events, upTo: after, inbox: inbox}
	if len(events) > 0 {
		early.upTo = events[len(events)-1].Slot
	}
	return run, early, nil
}

// waiting returns the inbox messages the read found, nil if none (or no
// read): the first fold reads the inbox itself then.
func (e *earlyLog) waiting() []world.InboxMessage {
	if e == nil || len(e.inbox) == 0 {
		return nil
	}
	return e.inbox
}

// logAfter returns the log's events after slot after: from the early read
// if it started there and the lease found the log no longer than last
// (negative: the lease did not say), topped up with what came after it;
// otherwise read now.
func (inv *invocation) logAfter(after int64, early *earlyLog, last int64) ([]world.Event, error) {
	if early == nil || early.after != after || last < 0 {
		return inv.readEvents(after)
	}
	events, err := inv.opened(early.events, nil)
	if err != nil || last <= early.upTo {
		return events, err
	}
	more, err := inv.readEvents(early.upTo)
	return append(events, more...), err
}
