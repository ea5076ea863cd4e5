package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// liveState is what the live loop keeps beside the workflow's state: the
// step attempts in flight, what they report, and why the invocation must
// hand the run off.
type liveState struct {
	results    chan stepResult
	heartbeats chan heartbeat // from running attempts, throttled
	closed     chan struct{}  // closed when the invocation ends: late results are dropped
	running    int            // step attempts in flight
	// fresh: a step waits for an attempt that does not fit in what is
	// left of this invocation's budget; once nothing runs, hand off.
	fresh bool
	// longStep: the step that waits fits no invocation of this engine;
	// the hand-off goes to Engine.LongSteps.
	longStep bool
}

// open readies the loop for one delivery: nothing in flight, nothing to
// hand off.
func (l *liveState) open() {
	*l = liveState{
		results: make(chan stepResult),
		// Room for a fan-out's beats while the loop writes; a full
		// channel only defers a heartbeat to the attempt's next.
		heartbeats: make(chan heartbeat, 16),
		closed:     make(chan struct{}),
	}
}

// shed drops the channels a parked invocation no longer reads; closed
// stays, for the late results of steps that ignored their context.
func (l *liveState) shed() { l.results, l.heartbeats = nil, nil }

// lazyFlush is how long creation events may sit in the buffer while steps
// run. Writing them with the step's result saves a durable write per step;
// the delay bounds how long an observer can miss a running step.
const lazyFlush = 25 * time.Millisecond

// drive replays the log, then runs the workflow live.
func (inv *invocation) drive(events []world.Event) error {
	inv.replay.pinned = pinnedTo(events)
	if err := inv.e.pinnedElsewhere(inv.run.ID, inv.run.Workflow, inv.replay.pinned); err != nil {
		return err // before replay: this code may not match the log
	}
	inv.driving = true
	inv.replayLog(events, inv.replay.pinned)
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
		if end == suspended && inv.inbox.folded {
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
		if inv.live.fresh && inv.live.running == 0 {
			// A step waits for a whole budget: hand off now rather than
			// idle out this one's.
			return outOfTime, nil
		}
		due := inv.nextDue()
		if inv.live.running == 0 && (due.IsZero() || due.Sub(inv.e.now()) > inv.e.InlineWait) {
			return suspended, nil
		}
		if len(inv.out.pending) > 0 && lazy == nil {
			lazy = time.After(lazyFlush)
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !due.IsZero() {
			t = time.NewTimer(max(due.Sub(inv.e.now()), 0))
			timer = t.C
		}
		select {
		case r := <-inv.live.results:
			inv.live.running--
			inv.recordStepResult(r)
			inv.drainResults()
		case hb := <-inv.live.heartbeats:
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
		case r := <-inv.live.results:
			inv.live.running--
			inv.recordStepResult(r)
		default:
			return
		}
	}
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
	ours := func() int64 { return max(inv.lastSlot.Load(), inv.out.writing.Load()) }
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
		inv.out.drop(eventKey(ev))
		inv.apply(ev)
	}
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
	if inv.live.longStep {
		// A worker without a time limit serves that queue; the run's
		// later wake-ups come back to this one's.
		inv.logAt(slog.LevelInfo, "workflow: a step fits no invocation here; handing the run to the long-step queue", "last_slot", last)
		return enqueue(inv.traced(), inv.e.LongSteps, world.Message{RunID: inv.run.ID, DedupKey: inv.run.ID + "/long/" + itoa(int(last))})
	}
	inv.logAt(slog.LevelInfo, "workflow: out of time; handing the run off to a fresh invocation", "last_slot", last)
	return enqueue(inv.traced(), inv.e.World, world.Message{RunID: inv.run.ID, DedupKey: inv.run.ID + "/handoff/" + itoa(int(last))})
}
