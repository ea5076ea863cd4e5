package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/lambdaworkflow/workflow/world"
)

// replayState says where an invocation stands in the log it replays. A
// replay applies recorded events, which the workflow must meet as it met
// them first: nothing it does then is written or logged anew.
type replayState struct {
	active    bool   // applying recorded events, not live ones
	ahead     int    // recorded events after the one being applied; 0 once live
	seenUntil int64  // the last slot some invocation applied live; see quiet
	pinned    string // the deployment the log's run_started pins the run to
	// recordedPatches are the patch IDs the log holds a marker for.
	recordedPatches map[string]bool
}

// begin starts a replay of a log applied live up to seenUntil.
func (r *replayState) begin(seenUntil int64) { r.active, r.seenUntil = true, seenUntil }

// at notes that the event about to be applied has ahead recorded events
// after it.
func (r *replayState) at(ahead int) { r.ahead = ahead }

// end ends the replay: what is applied from now on happens live.
func (r *replayState) end() { r.active, r.ahead = false, 0 }

// quiet reports whether an event at slot, replayed, was applied live
// before: its log lines were written then.
func (r *replayState) quiet(slot int64) bool { return r.active && slot <= r.seenUntil }

// Replay re-executes a recorded log against the registered workflow code,
// as an invocation does before it goes live, and stops there: no step
// runs, nothing is written and the World is not used. It returns the
// first disagreement between code and log: a *Nondeterminism naming the
// slot, a corrupted-log error for an event that does not decode,
// ErrUnknownWorkflow, or a panic of the workflow code. nil means a worker
// running this code would carry the run on from where the log ends.
func (e *Engine) Replay(ctx context.Context, events []world.Event) error {
	if len(events) == 0 || events[0].Type != world.RunCreated {
		return errors.New("replay: a run's log starts with run_created")
	}
	created, err := decodePayload[runCreatedPayload](events[0])
	if err != nil {
		return err
	}
	run := world.Run{ID: events[0].RunID, Workflow: created.Workflow, Input: created.Input, Attributes: created.Attributes}
	inv := newInvocation(ctx, e, run)
	defer inv.close()
	inv.expectRecorded(events)
	inv.replay.begin(replayAll)
	for i, ev := range events {
		if err := ctx.Err(); err != nil {
			return err
		}
		inv.replay.at(len(events) - 1 - i)
		inv.apply(ev)
		switch {
		case inv.fatal != nil:
			return inv.fatal
		case inv.terminal:
			return inv.checkEnd(ev)
		}
	}
	return nil
}

// checkEnd holds the code to the end the log records. A run that
// completed had returned a result by then, without making a call the log
// does not have, so the workflow must have too. A run that failed may have
// failed itself or been failed by the engine (its event limit), but the
// workflow did not return a result; a cancelled one may stop anywhere.
func (inv *invocation) checkEnd(end world.Event) error {
	var found string
	switch {
	case end.Type == world.RunCompleted && !inv.finished:
		found = "has not returned" + inv.lastCallSite()
		for _, op := range inv.ops {
			if !op.created {
				found = fmt.Sprintf("called %s as call #%d", op.describe(), op.seq)
				break
			}
		}
	case end.Type == world.RunCompleted && inv.failure != nil:
		found = "returned an error: " + inv.failure.Error()
	case end.Type == world.RunFailed && inv.finished && inv.failure == nil:
		found = "returned a result"
	default:
		return nil
	}
	return &Nondeterminism{RunID: inv.run.ID, Slot: end.Slot, Expected: string(end.Type), Found: found}
}

// StaysPinned reports the deployment a run stays with whatever code is
// deployed next: the one its log pins it to, unless its workflow in
// registry moves forward (Latest). "" means the next deployment drives it.
func StaysPinned(registry *Registry, workflow string, events []world.Event) string {
	if def, ok := registry.Workflow(workflow); ok && def.Latest {
		return ""
	}
	return pinnedTo(events)
}

// replayLog applies the run's log, then buffers the run's start, pinned
// to this deployment, unless the log records it: what an invocation does
// before it goes live.
func (inv *invocation) replayLog(events []world.Event, pinned string) {
	inv.expectRecorded(events)
	inv.replay.begin(lastSeen(events))
	started := false
	for i, ev := range events {
		started = started || ev.Type == world.RunStarted
		inv.replay.at(len(events) - 1 - i)
		inv.apply(ev)
	}
	inv.replay.end()
	switch {
	case inv.terminal:
	case !started:
		inv.logAt(slog.LevelInfo, "workflow: run started")
		// First in the buffer, before a patch marker the first pass of the
		// workflow may have buffered.
		payload, pin := inv.e.pin()
		inv.out.pending = slices.Insert(inv.out.pending, 0, newPending(world.RunStarted, "", payload, inv.e.now()))
		inv.out.merge(world.RunUpdate{Status: world.StatusRunning, Attributes: pin})
	default:
		inv.logAt(slog.LevelInfo, "workflow: run resumed", "replayed_events", len(events))
		if _, pin := inv.e.pin(); pin != nil && pinned != inv.e.Deployment {
			// A run that moves forward (or predates pinning): the listing
			// shows the deployment that drives it now.
			inv.out.merge(world.RunUpdate{Attributes: pin})
		}
		inv.countResume()
	}
}
