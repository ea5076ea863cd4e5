package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/lambdaworkflow/workflow/world"
)

// finish records the run's end: its result, or why it failed.
func (inv *invocation) finish() error {
	if err := inv.bufferLastPass(); err != nil {
		return err
	}
	failure := inv.fatal
	if failure == nil {
		failure = inv.failure
	}
	switch can := inv.continuation(); {
	case can != nil:
		inv.bufferContinued(can)
	case failure == nil:
		inv.bufferEvent(world.RunCompleted, "", runFinishedPayload{Output: inv.output})
		inv.out.merge(world.RunUpdate{Status: world.StatusCompleted, Output: orNull(inv.output)})
	default:
		encoded := inv.e.Errors.Encode(failure)
		inv.bufferEvent(world.RunFailed, "", runFinishedPayload{Error: encoded})
		inv.out.merge(world.RunUpdate{Status: world.StatusFailed, Error: encoded})
	}
	// The tokens go first, those of hooks created in this very append too:
	// whoever sees the run ended (Result returning, a new run claiming the
	// token) must find them free.
	buffered, err := inv.bufferedHooks()
	if err != nil {
		return err
	}
	if err := releaseHooks(inv.ctx, inv.e.World, inv.run.ID, append(inv.ownHooks(), buffered...)); err != nil {
		return err
	}
	if err := inv.flush(); err != nil {
		return err
	}
	if err := inv.afterFinish(nil); err != nil {
		return err
	}
	inv.e.idle.mark(inv.run.ID, inv.lastSlot.Load())
	return nil
}

// afterFinish releases what a finished run still holds, has the World
// expire it with its streams (world.Expirer), and reports to its parent
// (or, for a continued run, starts its successor, which reports instead). It runs after the terminal event is written and again on any
// later delivery for the run until it returns without error in this
// process (Process skips it then: idleRuns), so each action is idempotent. events, if
// given, is the run's whole log; otherwise the invocation's own state is
// used, and its hooks were released before the end was written. It reads
// the run and its stream index unsynced (world.UnsyncedReader): it acts on
// them only by writing to the World, after the end it read.
func (inv *invocation) afterFinish(events []world.Event) error {
	run, err := inv.e.caps().unsynced.GetRunUnsynced(inv.ctx, inv.run.ID)
	if err != nil {
		return err
	}
	held, err := inv.holdings(events)
	if err != nil {
		return err
	}
	if events != nil {
		// A run that ended before its writer released the tokens first.
		if err := releaseHooks(inv.ctx, inv.e.World, run.ID, held.hooks); err != nil {
			return err
		}
	}
	stranded, err := strandedReplies(inv.ctx, inv.e.caps().inbox, run)
	if err != nil {
		return err
	}
	streams, err := closeStreams(inv.ctx, inv.e.World, inv.e.caps().unsynced, run.ID, append(held.owed, stranded...))
	if err != nil {
		return err
	}
	if err := withdrawAll(inv.ctx, inv.e.caps().inbox, run.ID, stranded); err != nil {
		return err
	}
	if ex := inv.e.caps().expirer; ex != nil {
		if err := ex.ExpireRun(inv.ctx, run.ID, streams); err != nil {
			return err
		}
	}
	if err := releaseSlot(inv.ctx, inv.e.World, run, held.limit); err != nil {
		return err
	}
	if run.Status == world.StatusContinued {
		return inv.startSuccessor(run, events, held)
	}
	if held.parent == nil {
		return nil
	}
	// A cancelled run's Error holds its cancellation, so the parent sees it.
	output, err := OpenValue(inv.seal, placeRunOutput, run.Output)
	if err != nil {
		return err
	}
	result := childCompletedPayload{ChildRunID: run.ID, Output: output, Error: run.Error}
	ev := world.Event{Type: world.ChildCompleted, CorrelationID: held.parent.CorrelationID, Payload: mustJSON(result)}
	err = appendAndWake(inv.ctx, inv.e.World, inv.e.Codec, held.parent.RunID, ev, nil, inv.e.now())
	if errors.Is(err, world.ErrRunFinished) || errors.Is(err, world.ErrRunNotFound) {
		return nil
	}
	return err
}

// holdings is what a finished run must release.
type holdings struct {
	hooks  []*hookState // hooks it still owns
	owed   []string     // resume IDs of the messages it owed a reply
	parent *parentRef
	limit  *limitRef // the limit whose slot it holds, if any
}

// holdings lists what the run holds, from its log if given, else from the
// live invocation.
func (inv *invocation) holdings(events []world.Event) (holdings, error) {
	if events == nil {
		held := holdings{parent: inv.created.Parent, limit: inv.created.Limit, hooks: inv.ownHooks()}
		for _, op := range inv.ops {
			if op.Kind == OpHook {
				held.owed = append(held.owed, op.hook.owed...)
			}
		}
		return held, nil
	}
	return holdingsOf(events)
}

// ownHooks lists the hooks the live invocation holds.
func (inv *invocation) ownHooks() []*hookState {
	var hooks []*hookState
	for _, op := range inv.ops {
		if op.Kind == OpHook && op.created && op.hook.conflictOwner == "" && !op.hook.disposed {
			hooks = append(hooks, op.hook)
		}
	}
	return hooks
}

// holdingsOf lists what a run holds from (a part of) its log.
func holdingsOf(events []world.Event) (holdings, error) {
	// Replaying the hook events through hookState applies the same rules
	// as the live run: no reply is owed for a message sent after a takeover.
	var held holdings
	hooks := map[string]*hookState{}
	for _, ev := range events {
		switch ev.Type {
		case world.RunCreated:
			p, err := decodePayload[runCreatedPayload](ev)
			if err != nil {
				return held, err
			}
			held.parent, held.limit = p.Parent, p.Limit
		case world.HookCreated:
			p, err := decodePayload[hookCreatedPayload](ev)
			if err != nil {
				return held, err
			}
			h := &hookState{token: p.Token, retention: p.Retention, replies: p.Replies, createdAt: ev.CreatedAt}
			hooks[ev.CorrelationID] = h
			held.hooks = append(held.hooks, h)
		case world.HookConflict:
			p, err := decodePayload[hookConflictPayload](ev)
			if err != nil {
				return held, err
			}
			if h := hooks[ev.CorrelationID]; h != nil && p.ForceClaimed {
				h.forceClaimed = p.OwnerRunID
			}
		case world.HookReceived:
			p, err := decodePayload[hookReceivedPayload](ev)
			if err != nil {
				return held, err
			}
			if h := hooks[ev.CorrelationID]; h != nil {
				h.receive(HookMessage(p))
			}
		}
	}
	for _, h := range hooks {
		held.owed = append(held.owed, h.owed...)
	}
	return held, nil
}

func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}

// releaseUnrecorded releases the tokens of hooks whose creation the run
// ended before recording (a cancellation won the slot): nobody else knows
// the run claimed them.
func (inv *invocation) releaseUnrecorded() error {
	hooks, err := inv.bufferedHooks()
	if err != nil {
		return err
	}
	return releaseHooks(inv.ctx, inv.e.World, inv.run.ID, hooks)
}

// bufferedHooks lists the hooks claimed whose creation is still in the
// buffer, unrecorded.
func (inv *invocation) bufferedHooks() ([]*hookState, error) {
	var hooks []*hookState
	for _, p := range inv.out.pending {
		if p.ev.Type != world.HookCreated {
			continue
		}
		c, err := decodePayload[hookCreatedPayload](p.ev)
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, &hookState{token: c.Token, retention: c.Retention, createdAt: p.ev.CreatedAt})
	}
	return hooks, nil
}

// releaseHooks disposes of a run's hooks, each kept blocked for its
// retention. A token another run has taken over since is left alone.
func releaseHooks(ctx context.Context, w world.Store, runID string, hooks []*hookState) error {
	for _, h := range hooks {
		err := w.DisposeHook(ctx, h.token, runID, h.retainUntil())
		if err != nil && !errors.Is(err, world.ErrHookNotOwner) {
			return err
		}
	}
	return nil
}
