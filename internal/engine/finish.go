package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
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
		inv.mergeUpdate(world.RunUpdate{Status: world.StatusCompleted, Output: orNull(inv.output)})
	default:
		encoded := inv.e.Errors.Encode(failure)
		inv.bufferEvent(world.RunFailed, "", runFinishedPayload{Error: encoded})
		inv.mergeUpdate(world.RunUpdate{Status: world.StatusFailed, Error: encoded})
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
	err = AppendAndWake(inv.ctx, inv.e.World, inv.e.Codec, held.parent.RunID, ev, nil, inv.e.now())
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
	// Limit, if set, is the limit the run starts under (world.Limiter).
	Limit *world.Limit
	// Codec decides the run's payload scheme (nil: a plain run).
	Codec *codec.Chain
}

// StartRun creates a run and queues it. If the run exists already it is
// queued again (the first start may have died before queueing) and the
// error matches world.ErrRunExists.
func StartRun(ctx context.Context, w world.World, nr NewRun, now time.Time) (err error) {
	ctx, span := startRunSpan(ctx, nr)
	defer func() { EndSpan(span, err) }()
	created := runCreatedPayload{
		Workflow: nr.Workflow, Input: nr.Input, Attributes: nr.Attributes, Parent: nr.Parent, Trace: traceParent(ctx),
	}
	if nr.Limit != nil {
		created.Limit = &limitRef{Key: nr.Limit.Key}
	}
	first := world.Event{Type: world.RunCreated, CreatedAt: now, Payload: mustJSON(created)}
	run := world.Run{ID: nr.ID, Workflow: nr.Workflow, Status: world.StatusPending, Input: nr.Input,
		Attributes: nr.Attributes, CreatedAt: now, UpdatedAt: now}
	if nr.Codec != nil {
		if run, first, err = sealNewRun(ctx, nr.Codec, run, first); err != nil {
			return err
		}
	}
	msg := world.Message{RunID: nr.ID, DedupKey: nr.ID + "/start", Trace: traceParent(ctx)}
	if nr.Limit != nil {
		_, err = w.StartLimited(ctx, run, []world.Event{first}, msg, *nr.Limit)
	} else {
		_, err = w.StartRun(ctx, run, []world.Event{first}, msg)
	}
	return err
}

// StartOrJoin starts a run as StartRun does; a run that exists already is
// joined (and queued again) if it is of the same workflow, refused if not.
func StartOrJoin(ctx context.Context, w world.World, nr NewRun, now time.Time) error {
	err := StartRun(ctx, w, nr, now)
	if !errors.Is(err, world.ErrRunExists) {
		return err
	}
	existing, err := w.GetRun(ctx, nr.ID)
	if err != nil {
		return err
	}
	if existing.Workflow != nr.Workflow {
		return fmt.Errorf("run %s exists and belongs to workflow %q, not %q", nr.ID, existing.Workflow, nr.Workflow)
	}
	return nil
}

// AppendAndWake appends one event from outside the run (a hook resume, a
// cancellation, a child's result) at the end of its log, then queues the
// run so a worker applies it.
func AppendAndWake(ctx context.Context, w world.World, c *codec.Chain, runID string, ev world.Event, update *world.RunUpdate, now time.Time) error {
	if _, err := appendAtEnd(ctx, w, c, runID, ev, update, now, 0); err != nil {
		return err
	}
	return enqueue(ctx, w, world.Message{RunID: runID})
}

// appendRounds bounds how many lost slots one outside append follows
// when the run has no event limit; each means another writer appended
// first. With a limit the log's end bounds it: every lost slot moves the
// append one slot on, so a crowd of resumers (each a writer, each waking
// the run to write more) is followed to the end, not given up on.
const appendRounds = 100

// appendAtEnd appends one event at the end of a run's log, following the
// log as other writers fill it, and returns the slot it took. With a limit
// it refuses to write past slot limit (the run's MaxEvents). The event is
// sealed with the run's codec, which c opens.
func appendAtEnd(ctx context.Context, w world.World, c *codec.Chain, runID string, ev world.Event, update *world.RunUpdate, now time.Time, limit int) (int64, error) {
	run, err := w.GetRun(ctx, runID)
	if err != nil {
		return 0, err
	}
	if run.Status.Terminal() {
		return 0, fmt.Errorf("append to run %s: %w", runID, world.ErrRunFinished)
	}
	if ev, err = sealFor(ctx, c, run, ev); err != nil {
		return 0, err
	}
	ev.CreatedAt = now
	return appendFrom(ctx, w, runID, run.LastSlot+1, ev, update, limit, nil)
}

// appendFrom appends ev at slot from, or after the events other writers
// put there first, and returns the slot it took. seen, if set, is shown
// those events before each retry. With a limit it refuses to write past
// slot limit (the run's MaxEvents).
func appendFrom(ctx context.Context, w world.World, runID string, from int64, ev world.Event, update *world.RunUpdate, limit int, seen func(missed []world.Event) error) (int64, error) {
	for round := 0; ; round++ {
		if limit > 0 && from > int64(limit) {
			return 0, fmt.Errorf("append to run %s: its log holds %d events, its limit: %w", runID, from-1, ErrMaxEvents)
		}
		if limit <= 0 && round == appendRounds {
			return 0, fmt.Errorf("append to run %s: other writers took the end of the log %d times in a row", runID, appendRounds)
		}
		missed, err := w.AppendEvents(ctx, runID, from, []world.Event{ev}, update)
		if !errors.Is(err, world.ErrSlotTaken) {
			return from, err
		}
		if err := checkMissed(runID, from, missed); err != nil {
			return 0, err
		}
		if seen != nil {
			if err := seen(missed); err != nil {
				return 0, err
			}
		}
		from = missed[len(missed)-1].Slot + 1
	}
}

// checkMissed checks what a World returned for a lost slot: the events
// from slot from on, in order. Anything else (none, or an event whose slot
// is not where it sits, as a corrupted item's) would send the writer round
// again at the same slot for ever.
func checkMissed(runID string, from int64, missed []world.Event) error {
	if len(missed) == 0 {
		return fmt.Errorf("append to run %s: slot %d is taken, but the World returned no event there", runID, from)
	}
	for i, ev := range missed {
		if want := from + int64(i); ev.Slot != want {
			return fmt.Errorf("append to run %s: the World returned an event numbered %d at slot %d: the log is corrupt", runID, ev.Slot, want)
		}
	}
	return nil
}

// Cancel ends a run with a reason. The run's invocation, if one is live,
// sees the event, stops its steps (their contexts are cancelled) and exits.
// On a run that continued as new it cancels the latest run of the chain;
// encode returns that run's error as the error codec writes it.
//
// Like the run's own end, a cancellation releases the run's hook tokens
// before it is written, so that they are free once the run is seen ended:
// those the log records, and any whose creation lands before the
// cancellation (the append then loses its slot and learns of them).
func Cancel(ctx context.Context, w world.World, runID, reason string, encode func(runID string) json.RawMessage, now time.Time) error {
	run, err := Latest(ctx, w, runID) // one read where the run did not continue as new
	if err != nil {
		return err
	}
	if run.Status.Terminal() {
		return fmt.Errorf("cancel run %s: %w", run.ID, world.ErrRunFinished)
	}
	events, err := w.Events(ctx, run.ID, 0)
	if err != nil {
		return err
	}
	ev := world.Event{Type: world.RunCancelled, Payload: mustJSON(runFinishedPayload{Reason: reason}), CreatedAt: now}
	return endFromOutside(ctx, w, run.ID, events, ev, &world.RunUpdate{Status: world.StatusCancelled, Error: encode(run.ID)})
}

// endFromOutside appends a run's end (ev, with update) after its log
// events, releasing first the hook tokens the log records and any whose
// creation lands before the end, then queues a message, so that a worker
// does what follows a run's end (afterFinish): freeing its limiter slot,
// closing its streams, telling its parent.
//
// A second message, due endFollowUp after the end, is queued before the
// append: should the caller die between the append and the prompt
// message, nothing else would bring a worker, since a finished run is
// never overdue (world.Overdue), and the run would hold its slot and
// leave its parent waiting. Where the prompt message went out, the second
// costs one delivery that finds everything done.
func endFromOutside(ctx context.Context, w world.World, runID string, events []world.Event, ev world.Event, update *world.RunUpdate) error {
	release := func(events []world.Event) error {
		held, err := holdingsOf(events)
		if err != nil {
			return err
		}
		return releaseHooks(ctx, w, runID, held.hooks)
	}
	if err := release(events); err != nil {
		return err
	}
	if err := enqueue(ctx, w, world.Message{RunID: runID, DeliverAt: ev.CreatedAt.Add(EndFollowUp)}); err != nil {
		return err
	}
	if _, err := appendFrom(ctx, w, runID, int64(len(events))+1, ev, update, 0, release); err != nil {
		return err
	}
	return enqueue(ctx, w, world.Message{RunID: runID})
}

// EndFollowUp is how long after a run's end written from outside (a
// cancellation, the stuck-run check's failure) the message that stands in
// for a lost prompt one is due: long past the moment between the append
// and the prompt message, and short beside what a held limiter slot or a
// waiting parent would lose.
const EndFollowUp = time.Minute

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
	for _, p := range inv.buffer {
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
