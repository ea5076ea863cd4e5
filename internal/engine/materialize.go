package engine

import (
	"crypto/rand"
	"errors"
	"runtime"
	"strconv"

	"github.com/lambdaworkflow/workflow/world"
)

// materialize turns what the workflow asked for into buffered events and
// side effects: new ops get their creation events, steps that may run are
// started, due timers complete, disposed hooks are released.
func (inv *invocation) materialize() error {
	yielded := false
	for _, op := range inv.ops {
		if !op.buffered {
			if err := inv.create(op); err != nil {
				return err
			}
			op.buffered = true
		}
		inv.bufferStarted(op) // of an attempt started where the step was issued
		if op.done {
			continue
		}
		switch op.Kind {
		case OpStep:
			if !op.step.running && !op.step.settled && !inv.e.now().Before(op.step.retryAt) {
				inv.launch(op)
				if !yielded {
					// Let the first attempt start now: on a busy
					// machine the loop would otherwise keep its CPU
					// through the rest of a fan-out before any branch
					// ran.
					runtime.Gosched()
					yielded = true
				}
			}
		case OpWait:
			if !op.wait.completing && !inv.e.now().Before(op.wait.resumeAt) {
				op.wait.completing = true
				inv.bufferEvent(world.WaitCompleted, op.ID(), nil)
			}
		case OpHook:
			if err := inv.disposeIfAsked(op); err != nil {
				return err
			}
		}
	}
	return nil
}

// bufferLastPass buffers what the workflow did in its last pass that
// materialize has not seen, because the workflow returned: the creation
// and start of the steps it started (the log holds every attempt that
// began), the attributes it set, which the run's end writes with it, and
// the children it started without waiting for them, which start now.
// Logs written before attributes and children were kept here end without
// them and still replay: a run that returned is not held to a call that
// does not block.
func (inv *invocation) bufferLastPass() error {
	for _, op := range inv.ops {
		switch {
		case (op.Kind == OpAttrs || op.Kind == OpChild) && !op.buffered:
			if err := inv.create(op); err != nil {
				return err
			}
			op.buffered = true
		case !op.step.startedAt.IsZero():
			if !op.buffered {
				inv.bufferStepCreated(op)
				op.buffered = true
			}
			inv.bufferStarted(op)
		}
	}
	return nil
}

func (inv *invocation) create(op *Op) error {
	switch op.Kind {
	case OpStep:
		inv.bufferStepCreated(op)
	case OpWait:
		op.wait.resumeAt = inv.now.Add(op.wait.duration)
		inv.bufferEvent(world.WaitCreated, op.ID(), waitCreatedPayload{ResumeAt: op.wait.resumeAt})
	case OpHook:
		return inv.claimHook(op)
	case OpChild:
		return inv.startChild(op)
	case OpAttrs:
		inv.bufferAttributes(op)
	}
	return nil
}

// bufferAttributes records attributes the workflow set, in its log and on
// the run.
func (inv *invocation) bufferAttributes(op *Op) {
	inv.bufferEvent(world.AttributesSet, op.ID(), attributesPayload{Attributes: op.attrs})
	inv.out.merge(world.RunUpdate{Attributes: op.attrs})
}

func (inv *invocation) bufferStepCreated(op *Op) {
	inv.bufferEvent(world.StepCreated, op.ID(), stepCreatedPayload{Step: op.Name, Input: op.input})
}

// claimHook claims the hook's token in the World before recording the hook:
// the claim is what makes tokens unique across runs. Re-claiming after a
// crash is harmless because the same run and correlation already hold it.
func (inv *invocation) claimHook(op *Op) error {
	h := op.hook
	if h.token == "" {
		h.token = generateToken()
		op.Name = h.token
	}
	claim := world.Hook{
		Token: h.token, RunID: inv.run.ID, CorrelationID: op.ID(),
		Kind: h.kind, Metadata: h.metadata, CreatedAt: inv.e.now(),
	}
	prev, err := inv.e.World.ClaimHook(inv.ctx, claim, h.force)
	switch {
	case errors.Is(err, world.ErrHookConflict):
		inv.bufferEvent(world.HookConflict, op.ID(), hookConflictPayload{Token: h.token, OwnerRunID: prev.RunID})
		return nil
	case err != nil:
		return err
	}
	inv.bufferEvent(world.HookCreated, op.ID(), hookCreatedPayload{Token: h.token, Kind: h.kind, Metadata: h.metadata, Retention: h.retention, Replies: h.replies})
	if prev.RunID != "" && prev.RunID != inv.run.ID && !prev.Disposed {
		return inv.notifyTakeover(prev)
	}
	return nil
}

// notifyTakeover tells the run that held a token we took by force: its
// await on the hook fails, and it is woken to notice.
func (inv *invocation) notifyTakeover(prev world.Hook) error {
	ev := world.Event{Type: world.HookConflict, CorrelationID: prev.CorrelationID,
		Payload: mustJSON(hookConflictPayload{Token: prev.Token, OwnerRunID: inv.run.ID, ForceClaimed: true})}
	err := appendAndWake(inv.ctx, inv.e.World, inv.e.Codec, prev.RunID, ev, nil, inv.e.now())
	if errors.Is(err, world.ErrRunFinished) {
		return nil
	}
	return err
}

func (inv *invocation) disposeIfAsked(op *Op) error {
	h := op.hook
	if !h.disposeAsked || h.disposed || h.disposing || !op.created {
		return nil
	}
	h.disposing = true
	if h.conflictOwner == "" {
		retain := h.retainUntil()
		if err := inv.e.World.DisposeHook(inv.ctx, h.token, inv.run.ID, retain); err != nil && !errors.Is(err, world.ErrHookNotOwner) {
			return err
		}
	}
	inv.bufferEvent(world.HookDisposed, op.ID(), nil)
	return nil
}

// startChild creates the child run, then records it. The child's ID is
// derived from the parent's, so a retried creation finds the same run.
func (inv *invocation) startChild(op *Op) error {
	if op.child.runID == "" {
		op.child.runID = inv.run.ID + "-" + strconv.Itoa(op.seq)
	}
	root := inv.run.Attributes[attrRootRunID]
	if root == "" {
		root = inv.run.ID
	}
	attrs := map[string]string{attrParentRunID: inv.run.ID, attrRootRunID: root}
	err := startRun(inv.traced(), inv.e.World, NewRun{
		ID: op.child.runID, Workflow: op.Name, Input: op.input, Attributes: attrs,
		Parent: &parentRef{RunID: inv.run.ID, CorrelationID: op.ID()}, Limit: op.child.limit, Codec: inv.e.Codec,
	}, inv.e.now())
	if err != nil && !errors.Is(err, world.ErrRunExists) {
		return err
	}
	inv.bufferEvent(world.ChildCreated, op.ID(), childCreatedPayload{Workflow: op.Name, ChildRunID: op.child.runID})
	return nil
}

// generateToken makes an unguessable hook token. It is recorded in the log,
// so replay reuses it instead of generating another.
func generateToken() string {
	return "hk_" + rand.Text()
}

// GeneratedTokenLen is the length of every token generateToken makes
// (rand.Text gives 26 characters). Webhook tokens are always generated, so
// a longer one names no webhook.
const GeneratedTokenLen = len("hk_") + 26

func itoa(n int) string { return strconv.Itoa(n) }

// Reserved attributes set on child runs.
const (
	attrParentRunID = "$parentRunId"
	attrRootRunID   = "$rootRunId"
)
