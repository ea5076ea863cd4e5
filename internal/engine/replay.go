package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow/world"
)

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
	inv.replaying, inv.seenUntil = true, replayAll
	for i, ev := range events {
		if err := ctx.Err(); err != nil {
			return err
		}
		inv.ahead = len(events) - 1 - i
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
