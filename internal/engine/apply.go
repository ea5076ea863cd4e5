package engine

import (
	"fmt"
	"strconv"

	"github.com/lambdaworkflow/workflow/world"
)

// apply feeds one committed event to the workflow and lets it run until
// every coroutine blocks again. Events are applied strictly in slot order;
// that is what makes replay reproduce the original execution.
func (inv *invocation) apply(ev world.Event) {
	if ev.Slot != inv.lastSlot.Load()+1 && inv.fatal == nil {
		inv.fatal = fmt.Errorf("corrupted event log: run %s: expected slot %d, got %d", inv.run.ID, inv.lastSlot.Load()+1, ev.Slot)
	}
	inv.lastSlot.Store(ev.Slot)
	inv.bytes += int64(len(ev.Payload))
	inv.noteCeiling(ev.Slot)
	if ev.Type == world.RunCompleted || ev.Type == world.RunFailed || ev.Type == world.RunCancelled || ev.Type == world.RunContinued {
		if !inv.terminal && !inv.replay.active {
			inv.logEnd(ev)
			inv.countEnd(ev.Type)
		}
		inv.terminal = true
	}
	if inv.fatal != nil || inv.terminal {
		return // the workflow is past saving; only the log position matters
	}
	inv.now = ev.CreatedAt
	if err := inv.applyEvent(ev); err != nil {
		inv.fatal = err
		return
	}
	if inv.terminal {
		return
	}
	inv.sched.runUntilBlocked()
	if inv.sched.crash != nil && inv.fatal == nil {
		inv.fatal = inv.sched.crash
	}
}

func (inv *invocation) applyEvent(ev world.Event) error {
	switch ev.Type {
	case world.RunCreated:
		return inv.startWorkflow(ev)
	case world.RunStarted:
		return nil
	case world.RunCompleted, world.RunFailed, world.RunCancelled, world.RunContinued:
		inv.terminal = true
		return nil
	case world.PatchMarker:
		p, err := decodePayload[patchMarkerPayload](ev)
		inv.replay.recordedPatches[p.Patch] = true
		return err
	}
	if kind, ok := creationKind[ev.Type]; ok {
		return inv.applyCreation(ev, kind)
	}
	if ev.Type == world.HookConflict {
		p, err := decodePayload[hookConflictPayload](ev)
		if err != nil {
			return err
		}
		if !p.ForceClaimed {
			return inv.applyCreation(ev, OpHook)
		}
	}
	op, err := inv.opFor(ev)
	if err != nil {
		return err
	}
	switch ev.Type {
	case world.StepStarted:
		p, err := decodePayload[stepStartedPayload](ev)
		if p.Attempt >= op.step.attempt {
			op.step.attempt, op.step.deadline, op.step.open = p.Attempt, p.Deadline, true
		}
		return err
	case world.StepRetrying:
		p, err := decodePayload[stepFailedPayload](ev)
		op.step.attempt, op.step.retryAt = max(op.step.attempt, p.Attempt), p.RetryAt
		op.step.open = false
		if p.Heartbeat != nil {
			op.step.heartbeat = p.Heartbeat
		}
		return err
	case world.StepHeartbeat:
		p, err := decodePayload[stepHeartbeatPayload](ev)
		op.step.heartbeat = p.Details
		return err
	case world.StepCompleted:
		op.resolveRecorded(ev)
	case world.StepFailed:
		p, err := decodePayload[stepFailedPayload](ev)
		op.resolve(nil, p.Error)
		return err
	case world.WaitCompleted:
		op.resolve(nil, nil)
	case world.HookReceived:
		p, err := decodePayload[hookReceivedPayload](ev)
		op.hook.receive(HookMessage(p))
		inv.inbox.noteReceived(ev)
		return err
	case world.HookConflict: // a takeover; conflicts at creation went to applyCreation
		p, err := decodePayload[hookConflictPayload](ev)
		op.hook.forceClaimed = p.OwnerRunID
		return err
	case world.HookDisposed:
		op.hook.disposed = true
	case world.ChildCompleted:
		p, err := decodePayload[childCompletedPayload](ev)
		op.resolve(p.Output, p.Error)
		return err
	default:
		return fmt.Errorf("corrupted event log: slot %d has unknown type %q", ev.Slot, ev.Type)
	}
	return nil
}

func (inv *invocation) startWorkflow(ev world.Event) error {
	p, err := decodePayload[runCreatedPayload](ev)
	if err != nil {
		return err
	}
	inv.created = p
	def, ok := inv.e.Registry.Workflow(p.Workflow)
	if !ok {
		return fmt.Errorf("%w %q: is it registered in this binary?", ErrUnknownWorkflow, p.Workflow)
	}
	c := inv.ctxHandle()
	inv.sched.spawn(func() {
		out, err := def.Fn(c, p.Input)
		inv.finished, inv.output, inv.failure = true, out, err
	})
	return nil
}

// opFor finds the op an event is about. An event about an op the workflow
// has not issued means the code no longer matches the log.
func (inv *invocation) opFor(ev world.Event) (*Op, error) {
	seq, err := strconv.Atoi(ev.CorrelationID)
	if err != nil || seq < 1 {
		return nil, fmt.Errorf("corrupted event log: slot %d has correlation ID %q", ev.Slot, ev.CorrelationID)
	}
	if seq > len(inv.ops) {
		return nil, &Nondeterminism{
			RunID: inv.run.ID, Slot: ev.Slot,
			Expected: fmt.Sprintf("%s for call #%d", ev.Type, seq),
			Found:    inv.callsMade(),
		}
	}
	return inv.ops[seq-1], nil
}

// callsMade says how far the workflow got when the log holds more calls
// than it made: it is blocked, or it returned (with the error it returned,
// which often says why, e.g. an input that no longer decodes).
func (inv *invocation) callsMade() string {
	switch {
	case inv.finished && inv.failure != nil:
		return fmt.Sprintf("returned an error after %d durable calls: %v", len(inv.ops), inv.failure)
	case inv.finished:
		return fmt.Sprintf("returned after %d durable calls%s", len(inv.ops), inv.lastCallSite())
	}
	return fmt.Sprintf("made only %d durable calls%s", len(inv.ops), inv.lastCallSite())
}

func (inv *invocation) lastCallSite() string {
	if len(inv.ops) == 0 {
		return ""
	}
	return "; the last was " + inv.ops[len(inv.ops)-1].describe()
}

// applyCreation checks that the op the workflow issued at this position is
// the one the log recorded, and takes the recorded facts (resume times,
// generated tokens, child IDs) from the log.
func (inv *invocation) applyCreation(ev world.Event, kind OpKind) error {
	op, err := inv.opFor(ev)
	if err != nil {
		return err
	}
	recorded, err := inv.recordedName(ev)
	if err != nil {
		return err
	}
	nameMatters := kind == OpStep || kind == OpChild || (kind == OpHook && op.hook != nil && op.hook.token != "")
	if op.Kind != kind || (nameMatters && op.Name != recorded) {
		return &Nondeterminism{
			RunID: inv.run.ID, Slot: ev.Slot,
			Expected: fmt.Sprintf("%s %q as call #%d", kind, recorded, op.seq),
			Found:    "called " + op.describe(),
		}
	}
	op.created, op.buffered = true, true
	switch ev.Type {
	case world.WaitCreated:
		p, err := decodePayload[waitCreatedPayload](ev)
		op.wait.resumeAt = p.ResumeAt
		return err
	case world.HookCreated:
		op.Name, op.hook.token, op.hook.createdAt = recorded, recorded, ev.CreatedAt
	case world.HookConflict:
		p, err := decodePayload[hookConflictPayload](ev)
		op.hook.conflictOwner = p.OwnerRunID
		return err
	case world.ChildCreated:
		p, err := decodePayload[childCreatedPayload](ev)
		op.child.runID = p.ChildRunID
		return err
	case world.AttributesSet:
		op.resolve(nil, nil)
	}
	return nil
}

func (inv *invocation) recordedName(ev world.Event) (string, error) {
	switch ev.Type {
	case world.StepCreated:
		return recordedStepName(ev)
	case world.HookCreated:
		p, err := decodePayload[hookCreatedPayload](ev)
		return p.Token, err
	case world.HookConflict:
		p, err := decodePayload[hookConflictPayload](ev)
		return p.Token, err
	case world.ChildCreated:
		p, err := decodePayload[childCreatedPayload](ev)
		return p.Workflow, err
	}
	return "", nil
}
