package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// finish records the run's end: its result, or why it failed.
func (inv *invocation) finish() error {
	failure := inv.fatal
	if failure == nil {
		failure = inv.failure
	}
	if failure == nil {
		inv.bufferEvent(world.RunCompleted, "", runFinishedPayload{Output: inv.output})
		inv.mergeUpdate(world.RunUpdate{Status: world.StatusCompleted, Output: orNull(inv.output)})
	} else {
		encoded := inv.e.Errors.Encode(failure)
		inv.bufferEvent(world.RunFailed, "", runFinishedPayload{Error: encoded})
		inv.mergeUpdate(world.RunUpdate{Status: world.StatusFailed, Error: encoded})
	}
	if err := inv.flush(); err != nil {
		return err
	}
	return inv.afterFinish(nil)
}

// afterFinish releases what a finished run holds and reports to its parent.
// It runs after the terminal event is written and again on any later
// delivery for the run, so each action is idempotent. events, if given, is
// the run's whole log; otherwise the invocation's own state is used.
func (inv *invocation) afterFinish(events []world.Event) error {
	run, err := inv.e.World.GetRun(inv.ctx, inv.run.ID)
	if err != nil {
		return err
	}
	hooks, parent, err := inv.holdings(events)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		err := inv.e.World.DisposeHook(inv.ctx, h.token, run.ID, h.retainUntil())
		if err != nil && !errors.Is(err, world.ErrHookNotOwner) {
			return err
		}
	}
	if parent == nil {
		return nil
	}
	// A cancelled run's Error holds its cancellation, so the parent sees it.
	result := childCompletedPayload{ChildRunID: run.ID, Output: run.Output, Error: run.Error}
	ev := world.Event{Type: world.ChildCompleted, CorrelationID: parent.CorrelationID, Payload: mustJSON(result)}
	err = AppendAndWake(inv.ctx, inv.e.World, parent.RunID, ev, nil, inv.e.now())
	if errors.Is(err, world.ErrRunFinished) || errors.Is(err, world.ErrRunNotFound) {
		return nil
	}
	return err
}

// holdings lists the hooks a run created and its parent, from its log if
// given, else from the live invocation.
func (inv *invocation) holdings(events []world.Event) ([]*hookState, *parentRef, error) {
	if events == nil {
		var hooks []*hookState
		for _, op := range inv.ops {
			if op.Kind == OpHook && op.created && op.hook.conflictOwner == "" && !op.hook.disposed {
				hooks = append(hooks, op.hook)
			}
		}
		return hooks, inv.created.Parent, nil
	}
	var hooks []*hookState
	var parent *parentRef
	for _, ev := range events {
		switch ev.Type {
		case world.RunCreated:
			p, err := decodePayload[runCreatedPayload](ev)
			if err != nil {
				return nil, nil, err
			}
			parent = p.Parent
		case world.HookCreated:
			p, err := decodePayload[hookCreatedPayload](ev)
			if err != nil {
				return nil, nil, err
			}
			hooks = append(hooks, &hookState{token: p.Token, retention: p.Retention, createdAt: ev.CreatedAt})
		}
	}
	return hooks, parent, nil
}

func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}

// Cancelled is the error of a run that was cancelled.
type Cancelled struct {
	RunID  string
	Reason string
}

func (c *Cancelled) Error() string {
	if c.Reason == "" {
		return fmt.Sprintf("run %s was cancelled", c.RunID)
	}
	return fmt.Sprintf("run %s was cancelled: %s", c.RunID, c.Reason)
}

// NewRun describes a run to start.
type NewRun struct {
	ID         string
	Workflow   string
	Input      json.RawMessage
	Attributes map[string]string
	Parent     *parentRef
}

// StartRun creates a run and queues it. If the run exists already it is
// queued again (the first start may have died before queueing) and the
// error matches world.ErrRunExists.
func StartRun(ctx context.Context, w world.World, nr NewRun, now time.Time) error {
	first := world.Event{Type: world.RunCreated, CreatedAt: now, Payload: mustJSON(runCreatedPayload{
		Workflow: nr.Workflow, Input: nr.Input, Attributes: nr.Attributes, Parent: nr.Parent,
	})}
	run := world.Run{ID: nr.ID, Workflow: nr.Workflow, Status: world.StatusPending, Input: nr.Input,
		Attributes: nr.Attributes, CreatedAt: now, UpdatedAt: now}
	existing, err := w.CreateRun(ctx, run, []world.Event{first})
	if err != nil && (!errors.Is(err, world.ErrRunExists) || existing.Status.Terminal()) {
		return err
	}
	if qerr := w.Enqueue(ctx, world.Message{RunID: nr.ID, DedupKey: nr.ID + "/start"}); qerr != nil {
		return qerr
	}
	return err
}

// AppendAndWake appends one event from outside the run (a hook resume, a
// cancellation, a child's result) at the end of its log, then queues the
// run so a worker applies it.
func AppendAndWake(ctx context.Context, w world.World, runID string, ev world.Event, update *world.RunUpdate, now time.Time) error {
	run, err := w.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if run.Status.Terminal() {
		return fmt.Errorf("append to run %s: %w", runID, world.ErrRunFinished)
	}
	ev.CreatedAt = now
	from := run.LastSlot + 1
	for {
		missed, err := w.AppendEvents(ctx, runID, from, []world.Event{ev}, update)
		if errors.Is(err, world.ErrSlotTaken) && len(missed) > 0 {
			from = missed[len(missed)-1].Slot + 1
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	return w.Enqueue(ctx, world.Message{RunID: runID})
}

// Cancel ends a run with a reason. The run's invocation, if one is live,
// sees the event, stops its steps (their contexts are cancelled) and exits.
// encoded is the run's error as the error codec writes it.
func Cancel(ctx context.Context, w world.World, runID, reason string, encoded json.RawMessage, now time.Time) error {
	ev := world.Event{Type: world.RunCancelled, Payload: mustJSON(runFinishedPayload{Reason: reason})}
	return AppendAndWake(ctx, w, runID, ev, &world.RunUpdate{Status: world.StatusCancelled, Error: encoded}, now)
}

// Resume records a message for a hook in its run's log and wakes the run.
func Resume(ctx context.Context, w world.World, h world.Hook, resumeID string, payload json.RawMessage, now time.Time) error {
	ev := world.Event{Type: world.HookReceived, CorrelationID: h.CorrelationID,
		Payload: mustJSON(hookReceivedPayload{ResumeID: resumeID, Payload: payload})}
	return AppendAndWake(ctx, w, h.RunID, ev, nil, now)
}
