package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// lazyFlush is how long creation events may sit in the buffer while steps
// run. Writing them with the step's result saves a durable write per step;
// the delay bounds how long an observer can miss a running step.
const lazyFlush = 25 * time.Millisecond

// drive replays the log, then runs the workflow live.
func (inv *invocation) drive(events []world.Event) error {
	inv.pinned = pinnedTo(events)
	if err := inv.e.pinnedElsewhere(inv.run.ID, inv.run.Workflow, inv.pinned); err != nil {
		return err // before replay: this code may not match the log
	}
	inv.driving = true
	inv.replayLog(events, inv.pinned)
	return inv.goLive()
}

// goLive drives the replayed run live until it ends, suspends or must
// hand off.
func (inv *invocation) goLive() error {
	inv.liveAt = time.Now()
	if inv.fatal == nil && !inv.terminal && inv.lastSlot.Load() >= int64(inv.e.maxEvents()) {
		// Outside writers filled the log to its limit (they stop there):
		// the run can write nothing more, not even its result.
		inv.fatal = ErrMaxEvents
	}
	if errors.Is(inv.fatal, ErrUnknownWorkflow) {
		if !inv.e.OwnsDeployment {
			// Another worker of this deployment may hold the workflow:
			// leave the message for it (or for the dead-letter queue).
			return inv.fatal
		}
		// The run is new or pinned here (pinnedElsewhere said so), and no
		// retry will bring the workflow into this deployment.
		inv.fatal = inv.e.missingWorkflow(inv.run.Workflow)
	}
	if inv.run.Inbox > 0 {
		if _, err := inv.fold(); err != nil {
			return err
		}
	}
	wake := inv.watch()
	for {
		end, err := inv.loop(wake)
		if err != nil || end == ended {
			return err
		}
		if end == suspended && inv.folded {
			// Messages came in a burst: more may wait, and taking them
			// now saves releasing the lease and taking it again.
			took, err := inv.fold()
			if err != nil {
				return err
			}
			if took {
				continue
			}
		}
		missed, err := inv.releaseLease(end == suspended)
		if err != nil {
			return err
		}
		if end == outOfTime {
			return inv.handoff()
		}
		if !missed {
			// A message delivered while we held the lease had its
			// wake-up deferred to us.
			if missed, err = inv.inboxWaiting(); err != nil {
				return err
			}
		}
		if missed {
			// Events came in after the last look (a hook resume, say), and
			// their delivery was deferred to us: drive on, if no other
			// invocation took the lease meanwhile (it then reads them).
			_, _, err := inv.acquireLease()
			if err == nil {
				if err := inv.catchUp(); err != nil {
					return err
				}
				continue
			}
			if !errors.Is(err, world.ErrLeaseHeld) {
				return err
			}
		}
		return inv.suspend()
	}
}

// loopEnd says why the live loop stopped.
type loopEnd int

const (
	ended     loopEnd = iota // the run finished, or the invocation failed
	suspended                // only timers, hooks or children can move it on
	outOfTime                // the time budget ran out
)

// replayLog applies the run's log, then buffers the run's start, pinned
// to this deployment, unless the log records it: what an invocation does
// before it goes live.
func (inv *invocation) replayLog(events []world.Event, pinned string) {
	inv.expectRecorded(events)
	inv.replaying = true
	inv.seenUntil = lastSeen(events)
	started := false
	for i, ev := range events {
		started = started || ev.Type == world.RunStarted
		inv.ahead = len(events) - 1 - i
		inv.apply(ev)
	}
	inv.replaying = false
	switch {
	case inv.terminal:
	case !started:
		inv.logAt(slog.LevelInfo, "workflow: run started")
		// First in the buffer, before a patch marker the first pass of the
		// workflow may have buffered.
		payload, pin := inv.e.pin()
		inv.buffer = slices.Insert(inv.buffer, 0, newPending(world.RunStarted, "", payload, inv.e.now()))
		inv.mergeUpdate(world.RunUpdate{Status: world.StatusRunning, Attributes: pin})
	default:
		inv.logAt(slog.LevelInfo, "workflow: run resumed", "replayed_events", len(events))
		if _, pin := inv.e.pin(); pin != nil && pinned != inv.e.Deployment {
			// A run that moves forward (or predates pinning): the listing
			// shows the deployment that drives it now.
			inv.mergeUpdate(world.RunUpdate{Attributes: pin})
		}
		inv.countResume()
	}
}

// loop drives the run live until it ends or the invocation must stop. It
// writes everything it buffered before it returns suspended or outOfTime.
func (inv *invocation) loop(wake <-chan struct{}) (loopEnd, error) {
	budget := inv.budgetTimer()
	var lazy <-chan time.Time
	for {
		switch {
		case inv.terminal:
			return ended, nil // ended by another writer (cancelled)
		case inv.fatal != nil || inv.finished:
			return ended, inv.finish()
		}
		if err := inv.materialize(); err != nil {
			return ended, err
		}
		if inv.needsFlush() {
			if err := inv.flush(); err != nil {
				return ended, err
			}
			lazy = nil
			continue
		}
		if inv.fresh && inv.running == 0 {
			// A step waits for a whole budget: hand off now rather than
			// idle out this one's.
			return outOfTime, nil
		}
		due := inv.nextDue()
		if inv.running == 0 && (due.IsZero() || due.Sub(inv.e.now()) > inv.e.InlineWait) {
			return suspended, nil
		}
		if len(inv.buffer) > 0 && lazy == nil {
			lazy = time.After(lazyFlush)
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !due.IsZero() {
			t = time.NewTimer(max(due.Sub(inv.e.now()), 0))
			timer = t.C
		}
		select {
		case r := <-inv.results:
			inv.running--
			inv.recordStepResult(r)
			inv.drainResults()
		case hb := <-inv.heartbeats:
			inv.recordHeartbeat(hb)
		case <-timer: // materialize sees what fell due
		case <-lazy:
			if err := inv.flush(); err != nil {
				return ended, err
			}
			lazy = nil
		case <-wake:
			if err := inv.catchUp(); err != nil {
				return ended, err
			}
		case <-budget:
			inv.abandonRunning()
			return outOfTime, inv.flush()
		case <-inv.ctx.Done():
			return ended, inv.ctx.Err()
		}
		if t != nil {
			t.Stop()
		}
	}
}

// drainResults takes the results of the other steps that have finished
// too, so that a fan-out's results that arrive together are written
// together, in one append, instead of each waiting for the writes of
// those before it.
func (inv *invocation) drainResults() {
	for {
		select {
		case r := <-inv.results:
			inv.running--
			inv.recordStepResult(r)
		default:
			return
		}
	}
}

// needsFlush reports whether the buffer holds something the workflow must
// see before it can move on, or whether nothing else will flush it soon.
func (inv *invocation) needsFlush() bool {
	if len(inv.buffer) == 0 && inv.update == nil {
		return false
	}
	if inv.running == 0 {
		return true
	}
	for _, p := range inv.buffer {
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

// budgetTimer fires when the invocation should stop taking work and hand
// the run to a fresh invocation: at the end of its budget (duration.go).
func (inv *invocation) budgetTimer() <-chan time.Time {
	end, _, ok := inv.budget()
	if !ok {
		return nil
	}
	return time.After(max(time.Until(end), 0))
}

// watch wakes the loop when some other writer appends to the run's log: a
// hook resume, a cancellation, a child's result, a duplicate worker.
func (inv *invocation) watch() <-chan struct{} {
	wake := make(chan struct{})
	// Our own appends wake the watcher too. It waits past the slots of the
	// append in flight (writing is set before the append is sent), so that
	// it does not take our write for another writer's and wake the loop
	// for nothing. If that append loses its slots instead, flush itself
	// applies the events it missed.
	ours := func() int64 { return max(inv.lastSlot.Load(), inv.writing.Load()) }
	// The watcher keeps its own copy of the context and run ID: it may
	// still be winding down when a parked invocation is revived (warm.go)
	// with new ones.
	ctx, runID := inv.ctx, inv.run.ID
	go func() {
		for {
			seen := ours()
			if inv.waitForOthers(ctx, runID, seen) != nil {
				return
			}
			if ours() > seen {
				continue // our own write
			}
			select {
			case wake <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return wake
}

// watchPoll is how often an invocation on a World that cannot notify (the
// AWS World) looks for other writers' events. Between its own appends it
// needs no look at all: another writer's event makes its next append lose
// the slot, and flush applies what it missed. So the loop is woken only
// after a whole interval without an append of its own, and then it reads
// the log: on AWS, at most one Query a second, and none while steps
// complete faster than that.
const watchPoll = time.Second

func (inv *invocation) waitForOthers(ctx context.Context, runID string, seen int64) error {
	if n := inv.e.caps().notifier; n != nil {
		return n.WaitEvents(ctx, runID, seen)
	}
	t := time.NewTimer(watchPoll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// catchUp applies events other writers appended, and the messages waiting
// in the run's inbox if it awaits any.
func (inv *invocation) catchUp() error {
	evs, err := inv.readEvents(inv.lastSlot.Load())
	if err != nil {
		return err
	}
	inv.absorb(evs)
	if inv.awaitsMessages() {
		_, err = inv.fold()
	}
	return err
}

// absorb applies events written by someone else, dropping what we were
// about to write ourselves if they already wrote it.
func (inv *invocation) absorb(evs []world.Event) {
	for _, ev := range evs {
		if ev.Slot <= inv.lastSlot.Load() {
			continue
		}
		key := eventKey(ev)
		kept := inv.buffer[:0]
		for _, p := range inv.buffer {
			if p.key != key {
				kept = append(kept, p)
			}
		}
		inv.buffer = kept
		inv.apply(ev)
	}
}

// flush writes the buffer at the end of the log, then applies what it
// wrote. A lost slot race is absorbed and the write retried after it.
func (inv *invocation) flush() error {
	for len(inv.buffer) > 0 || inv.update != nil {
		if inv.fatal == nil && int(inv.lastSlot.Load())+len(inv.buffer) > inv.e.maxEvents() {
			inv.fatal = ErrMaxEvents
			inv.buffer, inv.update = nil, nil
			return nil
		}
		// A big buffer (a wide fan-out's creation events) goes in several
		// appends; the run's update goes with the last, beside the event
		// that caused it.
		n := min(len(inv.buffer), inv.e.caps().maxAppend)
		update := inv.update
		if n < len(inv.buffer) {
			update = nil
		}
		evs := make([]world.Event, n)
		for i, p := range inv.buffer[:n] {
			evs[i] = p.ev // stamped when buffered: when it happened
		}
		from := inv.lastSlot.Load() + 1
		inv.writing.Store(from + int64(len(evs)) - 1)
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
		inv.buffer = inv.buffer[n:]
		if update != nil {
			inv.update = nil
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
	inv.buffer = append(inv.buffer, newPending(t, corr, payload, inv.e.now()))
}

func newPending(t world.EventType, corr string, payload any, at time.Time) pending {
	ev := world.Event{Type: t, CorrelationID: corr, CreatedAt: at}
	if payload != nil {
		ev.Payload = mustJSON(payload)
	}
	return pending{ev: ev, key: eventKey(ev)}
}

func (inv *invocation) mergeUpdate(u world.RunUpdate) {
	if inv.update == nil {
		inv.update = &world.RunUpdate{}
	}
	if u.Status != "" {
		inv.update.Status = u.Status
	}
	if u.Output != nil {
		inv.update.Output = u.Output
	}
	if u.Error != nil {
		inv.update.Error = u.Error
	}
	for k, v := range u.Attributes {
		if inv.update.Attributes == nil {
			inv.update.Attributes = map[string]string{}
		}
		inv.update.Attributes[k] = v
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

// nextDue is the earliest time a created wait falls due or a failed step
// may be retried; zero if there is none.
func (inv *invocation) nextDue() time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, op := range inv.ops {
		if op.done || !op.buffered {
			continue
		}
		switch {
		case op.Kind == OpWait:
			consider(op.wait.resumeAt)
		case op.Kind == OpStep && !op.step.running && !op.step.settled:
			consider(op.step.retryAt)
		}
	}
	return next
}

// suspend schedules a wake-up for every timer and delayed retry and ends
// the invocation; hooks and children wake the run by themselves. A run
// with nothing scheduled is marked idle: until its log grows, a delivery
// for it has nothing to do (see idleRuns). The loop
// only suspends with an empty buffer, and the lease is released first, so
// that no wake-up reaches another invocation while this one holds it.
func (inv *invocation) suspend() error {
	inv.logSuspend()
	scheduled := false
	inv.outcome = "suspended"
	for _, op := range inv.ops {
		if op.done || !op.buffered {
			continue
		}
		var at time.Time
		switch {
		case op.Kind == OpWait:
			at = op.wait.resumeAt
		case op.Kind == OpStep && !op.step.settled:
			at = op.step.retryAt
		default:
			continue
		}
		msg := world.Message{RunID: inv.run.ID, DeliverAt: at, DedupKey: inv.run.ID + "/wake/" + op.ID() + "/" + itoa(op.step.attempt)}
		if err := enqueue(inv.traced(), inv.e.World, msg); err != nil {
			return err
		}
		scheduled = true
	}
	if !scheduled {
		inv.e.idle.mark(inv.run.ID, inv.lastSlot.Load())
	}
	return nil
}

// handoff passes the run to a fresh invocation because this one is out of
// time, or to the long-step queue because a step fits none of this
// engine's invocations. Steps in flight are abandoned and run again there. The loop has
// written the buffer, and the lease is released, so the fresh invocation
// can take the run at once.
func (inv *invocation) handoff() error {
	inv.outcome = "handoff"
	last := inv.lastSlot.Load()
	if inv.longStep {
		// A worker without a time limit serves that queue; the run's
		// later wake-ups come back to this one's.
		inv.logAt(slog.LevelInfo, "workflow: a step fits no invocation here; handing the run to the long-step queue", "last_slot", last)
		return enqueue(inv.traced(), inv.e.LongSteps, world.Message{RunID: inv.run.ID, DedupKey: inv.run.ID + "/long/" + itoa(int(last))})
	}
	inv.logAt(slog.LevelInfo, "workflow: out of time; handing the run off to a fresh invocation", "last_slot", last)
	return enqueue(inv.traced(), inv.e.World, world.Message{RunID: inv.run.ID, DedupKey: inv.run.ID + "/handoff/" + itoa(int(last))})
}
