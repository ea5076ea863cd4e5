package engine

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// outbox is what an invocation will write to its run's log: the events
// buffered for the next append and the change to the run's entity that
// goes with it. flush writes it.
type outbox struct {
	pending []pending
	update  *world.RunUpdate
	writing atomic.Int64 // the last slot of our latest append, set before it is sent; read by the watcher
}

// empty reports whether nothing waits to be written.
func (o *outbox) empty() bool { return len(o.pending) == 0 && o.update == nil }

// drop takes out the buffered event another writer has recorded already.
func (o *outbox) drop(key string) {
	kept := o.pending[:0]
	for _, p := range o.pending {
		if p.key != key {
			kept = append(kept, p)
		}
	}
	o.pending = kept
}

// needsFlush reports whether the buffer holds something the workflow must
// see before it can move on, or whether nothing else will flush it soon.
func (inv *invocation) needsFlush() bool {
	if inv.out.empty() {
		return false
	}
	if inv.live.running == 0 {
		return true
	}
	for _, p := range inv.out.pending {
		if !lazy(p.ev.Type) {
			return true
		}
	}
	return false
}

// lazy reports whether an event may wait in the buffer while steps run,
// to be written with the next result (or after lazyFlush): it records that
// something began (the run, a durable call, a step attempt, a patched
// branch) or a step's progress (a heartbeat), which nothing waits on. Writing the run's start eagerly would
// put a write between the run's first steps and their start, and cost
// every run a write.
func lazy(t world.EventType) bool {
	_, creates := creationKind[t]
	return creates || t == world.StepStarted || t == world.StepHeartbeat || t == world.RunStarted || t == world.PatchMarker
}

// flush writes the buffer at the end of the log, then applies what it
// wrote. A lost slot race is absorbed and the write retried after it.
func (inv *invocation) flush() error {
	for !inv.out.empty() {
		if inv.fatal == nil && int(inv.lastSlot.Load())+len(inv.out.pending) > inv.e.maxEvents() {
			inv.fatal = ErrMaxEvents
			inv.out.pending, inv.out.update = nil, nil
			return nil
		}
		// A big buffer (a wide fan-out's creation events) goes in several
		// appends; the run's update goes with the last, beside the event
		// that caused it.
		n := min(len(inv.out.pending), inv.e.caps().maxAppend)
		update := inv.out.update
		if n < len(inv.out.pending) {
			update = nil
		}
		evs := make([]world.Event, n)
		for i, p := range inv.out.pending[:n] {
			evs[i] = p.ev // stamped when buffered: when it happened
		}
		from := inv.lastSlot.Load() + 1
		inv.out.writing.Store(from + int64(len(evs)) - 1)
		missed, err := inv.appendEvents(from, evs, update)
		switch {
		case errors.Is(err, world.ErrSlotTaken):
			if err := checkMissed(inv.run.ID, from, missed); err != nil {
				return err
			}
			inv.absorb(missed)
			if inv.terminal {
				return nil
			}
			continue
		case errors.Is(err, world.ErrRunFinished):
			inv.terminal = true
			return inv.releaseUnrecorded()
		case err != nil:
			return err
		}
		inv.out.pending = inv.out.pending[n:]
		if update != nil {
			inv.out.update = nil
		}
		for i := range evs {
			evs[i].RunID, evs[i].Slot = inv.run.ID, from+int64(i)
			inv.apply(evs[i])
		}
	}
	return nil
}

// bufferEvent queues an event for the next append. It is stamped now, when
// it happens: a step's step_created and step_started, written lazily with
// its result, keep the times the step was created and started.
func (inv *invocation) bufferEvent(t world.EventType, corr string, payload any) {
	inv.out.pending = append(inv.out.pending, newPending(t, corr, payload, inv.e.now()))
}

func newPending(t world.EventType, corr string, payload any, at time.Time) pending {
	ev := world.Event{Type: t, CorrelationID: corr, CreatedAt: at}
	if payload != nil {
		ev.Payload = mustJSON(payload)
	}
	return pending{ev: ev, key: eventKey(ev)}
}

// merge folds u into the update that goes with the next append: the
// latest status, output and error, and every attribute.
func (o *outbox) merge(u world.RunUpdate) {
	if o.update == nil {
		o.update = &world.RunUpdate{}
	}
	if u.Status != "" {
		o.update.Status = u.Status
	}
	if u.Output != nil {
		o.update.Output = u.Output
	}
	if u.Error != nil {
		o.update.Error = u.Error
	}
	for k, v := range u.Attributes {
		if o.update.Attributes == nil {
			o.update.Attributes = map[string]string{}
		}
		o.update.Attributes[k] = v
	}
}

// eventKey identifies an event for deduplication between writers: two
// events with the same key record the same fact.
func eventKey(ev world.Event) string {
	key := string(ev.Type) + "/" + ev.CorrelationID
	switch ev.Type {
	case world.StepStarted, world.StepRetrying:
		if p, err := decodePayload[stepStartedPayload](ev); err == nil {
			key += "/" + itoa(p.Attempt)
		}
	case world.HookReceived:
		if p, err := decodePayload[hookReceivedPayload](ev); err == nil {
			key += "/" + p.ResumeID
		}
	case world.PatchMarker:
		if p, err := decodePayload[patchMarkerPayload](ev); err == nil {
			key += "/" + p.Patch
		}
	}
	return key
}

// pending is a buffered event and the identity used to drop it when another
// writer already recorded the same thing.
type pending struct {
	ev  world.Event
	key string
}
