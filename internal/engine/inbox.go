package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// inboxState is what an invocation knows of its run's inbox
// (world.Inbox): which hook messages the log holds, what the run's read
// found waiting, and whether it folded any.
type inboxState struct {
	received map[string]bool      // eventKeys of the log's hook messages, against redelivered inbox messages
	read     []world.InboxMessage // the inbox as the run's read before the lease found it, for the first fold
	folded   bool                 // the invocation folded inbox messages: more may be coming
}

// noteReceived records a hook message the log holds.
func (s *inboxState) noteReceived(ev world.Event) { s.received[eventKey(ev)] = true }

// inLog reports whether the log holds the message already (a resumer's
// retry of one folded before).
func (s *inboxState) inLog(m world.InboxMessage) bool { return s.received[eventKey(m.Event)] }

// takeRead returns what the run's read found waiting, once: nil after
// the first fold, or if the read found nothing.
func (s *inboxState) takeRead() []world.InboxMessage {
	msgs := s.read
	s.read = nil
	return msgs
}

// A run's inbox (world.Inbox) takes hook messages without contention: a
// resumer writes its message under a key of its own instead of racing
// every other resumer for the log's next slot, and the invocation holding
// the run's lease folds the waiting messages into the log, many in one
// append. The holder reads the inbox when it goes live if GetRun counted
// messages there, when its watcher wakes while the run awaits a message,
// before it releases the lease if it folded anything, and once after:
// a message delivered while it held the lease had its wake-up deferred to
// it (deferToHolder). The resumer's wake-up is what makes an invocation
// run at all if none held the lease.

// maxFold is the most messages one append folds: on the AWS World each
// takes two items of its transaction (its event and its inbox item's
// delete), and a transaction holds 100.
const maxFold = 32

// deliver puts msg, a hook_received event for h, in the inbox of h's run
// and wakes the run: three round trips after the run's read (the put,
// then the hook's check beside the wake-up). The message counts as sent to h if h still holds its
// token, undisposed, once the message is in: anything that happens to the
// hook later (a dispose, a takeover) is ordered after it, and the run's
// lease holder folds it. Otherwise the message is taken back and deliver
// reports false, for the caller to follow the token, unless a fold took
// it first: then it is the run's. A run whose log and inbox hold maxEvents
// messages takes no more (ErrMaxEvents).
func deliver(ctx context.Context, w world.World, c *codec.Chain, inbox world.Inbox, h world.Hook, msg world.InboxMessage, now time.Time, maxEvents int) (bool, error) {
	run, err := w.GetRun(ctx, h.RunID)
	switch {
	case errors.Is(err, world.ErrRunNotFound):
		return false, nil
	case err != nil:
		return false, err
	case run.Status.Terminal():
		return false, nil // unless the token moved on, the next read says not found
	case maxEvents > 0 && run.LastSlot+int64(run.Inbox) >= int64(maxEvents):
		return false, fmt.Errorf("resume run %s: its log and inbox hold %d events, its limit: %w", run.ID, run.LastSlot+int64(run.Inbox), ErrMaxEvents)
	}
	if msg.Event, err = sealFor(ctx, c, run, msg.Event); err != nil {
		return false, err
	}
	msg.Event.CreatedAt = now
	if err := inbox.Deliver(ctx, h.RunID, msg); err != nil {
		return false, err
	}
	// The wake-up goes out while the hook is checked again, since the
	// message is in the inbox either way: if the hook moved, the message
	// is withdrawn and the woken invocation finds nothing (or folds it
	// first, which makes it the run's, as a fold racing the check could
	// before). A sent wake-up is never wrong, only sometimes not needed.
	woke := make(chan error, 1)
	go func() { woke <- enqueue(ctx, w, world.Message{RunID: h.RunID}) }()
	cur, err := w.GetHook(ctx, h.Token)
	wakeErr := <-woke
	if err != nil && !errors.Is(err, world.ErrHookNotFound) {
		return false, err
	}
	if err == nil && sameClaim(cur, h) && !cur.Disposed {
		return true, wakeErr
	}
	withdrawn, err := inbox.Withdraw(ctx, h.RunID, msg.ID)
	return !withdrawn && err == nil, err
}

// inbox is the World's inbox, if it has one and this invocation holds the
// run's lease: only the holder folds.
func (inv *invocation) foldingInbox() world.Inbox {
	if !inv.lease.held {
		return nil
	}
	return inv.e.caps().inbox
}

// awaitsMessages reports whether the run holds a hook that messages may
// still reach, so that its inbox is worth reading.
func (inv *invocation) awaitsMessages() bool {
	if inv.e.caps().inbox == nil {
		return false
	}
	for _, op := range inv.ops {
		if op.Kind == OpHook && op.buffered && !op.hook.disposed && op.hook.conflictOwner == "" && op.hook.forceClaimed == "" {
			return true
		}
	}
	return false
}

// inboxWaiting reports whether messages wait in the run's inbox; the
// invocation asks after releasing the lease, when it holds none.
func (inv *invocation) inboxWaiting() (bool, error) {
	if !inv.awaitsMessages() {
		return false, nil
	}
	msgs, err := inv.e.caps().inbox.Inbox(inv.ctx, inv.run.ID)
	return len(msgs) > 0, err
}

// fold appends the messages waiting in the run's inbox to its log, in
// batches of maxFold, and applies them as it would any event from outside.
// It reports whether the run took in anything new. The first fold of an
// invocation folds what the run's read before the lease found in the
// inbox, without reading it again: a message folded since by an earlier
// holder is in the log the lease made this one read (so it is only taken
// out of the inbox, whose changed item sends the fold back to read it),
// and one delivered since is folded like one delivered during the fold.
func (inv *invocation) fold() (took bool, err error) {
	ib := inv.foldingInbox()
	start := inv.lastSlot.Load()
	for ib != nil && !inv.terminal && inv.fatal == nil {
		msgs, err := inv.inbox.takeRead(), error(nil)
		if msgs == nil {
			msgs, err = ib.Inbox(inv.ctx, inv.run.ID)
		}
		if err != nil || len(msgs) == 0 {
			return inv.lastSlot.Load() > start, err
		}
		again, err := inv.foldBatch(ib, msgs[:min(len(msgs), maxFold)])
		if err != nil || (!again && len(msgs) <= maxFold) {
			return inv.lastSlot.Load() > start, err
		}
	}
	return inv.lastSlot.Load() > start, nil
}

// foldBatch folds msgs in one append, following the log if another writer
// appends first. A message the log holds already (a resumer's retry of
// one folded before) is only taken out of the inbox; one for a hook that
// another run has taken over is sent on to that run. It reports whether
// the inbox should be read again: a message was withdrawn meanwhile.
func (inv *invocation) foldBatch(ib world.Inbox, msgs []world.InboxMessage) (again bool, err error) {
	for !inv.terminal {
		room := int64(inv.e.maxEvents()) - inv.lastSlot.Load()
		var evs []world.Event
		var ids []string
		for _, m := range msgs {
			if int64(len(evs)) >= room {
				break
			}
			if !inv.inbox.inLog(m) {
				sent, err := inv.forward(m)
				if err != nil {
					return false, err
				}
				if !sent {
					evs = append(evs, m.Event)
				}
			}
			ids = append(ids, m.ID)
		}
		if len(ids) == 0 {
			inv.fatal = ErrMaxEvents // the log is full, see below
			return false, nil
		}
		from := inv.lastSlot.Load() + 1
		inv.out.writing.Store(from + int64(len(evs)) - 1)
		missed, err := inv.opened(ib.AppendFolded(inv.ctx, inv.lease.owner, inv.run.ID, from, evs, nil, ids))
		switch {
		case errors.Is(err, world.ErrSlotTaken):
			if err := checkMissed(inv.run.ID, from, missed); err != nil {
				return false, err
			}
			inv.absorb(missed)
			continue
		case errors.Is(err, world.ErrInboxChanged):
			return true, nil
		case errors.Is(err, world.ErrRunFinished):
			inv.terminal = true
			return false, inv.releaseUnrecorded()
		case err != nil:
			return false, err
		}
		inv.inbox.folded = true
		for i := range evs {
			evs[i].RunID, evs[i].Slot = inv.run.ID, from+int64(i)
		}
		if evs, err = openEvents(inv.seal, evs); err != nil { // sealed by their resumers
			return false, err
		}
		for i := range evs {
			inv.apply(evs[i])
		}
		if !inv.terminal && inv.fatal == nil && inv.lastSlot.Load() >= int64(inv.e.maxEvents()) {
			// The log is full: the run can record nothing more, not even
			// its result, as when writers from outside fill it.
			inv.fatal = ErrMaxEvents
		}
		return false, nil
	}
	return false, nil
}

// forward sends a message on to the run that took its hook over, and
// reports whether it did. The message was delivered while this run held
// the token, but a message in the log after the takeover is not this
// run's (hookState.receive), so it goes, with the same ID, to the new
// holder, as a resumer that lost the race to the takeover would send it.
// A hook released since keeps the message here.
func (inv *invocation) forward(m world.InboxMessage) (bool, error) {
	op, err := inv.opFor(m.Event)
	if err != nil || op.Kind != OpHook || op.hook.forceClaimed == "" {
		return false, nil // the fold applies it, and so reports what is wrong
	}
	cur, err := inv.e.World.GetHook(inv.ctx, op.hook.token)
	switch {
	case errors.Is(err, world.ErrHookNotFound):
		return false, nil
	case err != nil:
		return false, err
	case cur.RunID == inv.run.ID || cur.Disposed:
		return false, nil
	}
	if m.Event, err = inv.resealFor(cur.RunID, m.Event, cur.CorrelationID); err != nil {
		return false, err
	}
	if err := inv.e.caps().inbox.Deliver(inv.ctx, cur.RunID, m); err != nil {
		return false, err
	}
	return true, enqueue(inv.ctx, inv.e.World, world.Message{RunID: cur.RunID})
}

// strandedReplies lists the resume IDs of the messages a finished run
// left in its inbox (delivered while it ended), whose callers must learn
// that no reply will come. A non-responding hook's message gets a closed
// reply stream nobody reads: knowing which hooks reply would cost a read
// of the log, and such a message is rare.
func strandedReplies(ctx context.Context, ib world.Inbox, run world.Run) ([]string, error) {
	if ib == nil || run.Inbox == 0 {
		return nil, nil
	}
	msgs, err := ib.Inbox(ctx, run.ID)
	var ids []string
	for _, m := range msgs {
		if m.Event.Type == world.HookReceived {
			ids = append(ids, m.ID)
		}
	}
	return ids, err
}

// withdrawAll takes a finished run's stranded messages out of its inbox,
// once their callers have been told: nothing will fold them, and on the
// AWS World each keeps the run in the index of runs due.
func withdrawAll(ctx context.Context, ib world.Inbox, runID string, ids []string) error {
	for _, id := range ids {
		if _, err := ib.Withdraw(ctx, runID, id); err != nil {
			return err
		}
	}
	return nil
}
