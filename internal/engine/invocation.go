package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// invocation is one pass of the engine over one run: it replays the log,
// then drives the run live until it finishes, suspends or hands off.
type invocation struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc // stops running steps, the log watcher and the heartbeat
	e        *Engine
	run      world.Run
	lease    *runLease
	seal     *codec.Run // the run's payload codec; nil for a plain run
	log      *slog.Logger
	span     trace.Span // nil until the log is read
	began    time.Time
	openedAt time.Time // when Process made the invocation: its budget runs from here
	liveAt   time.Time // when it had replayed the log and went live
	outcome  string    // how the invocation ended, for its span and duration

	created   runCreatedPayload
	sched     *scheduler
	rng       *rand.Rand
	now       time.Time // deterministic workflow time
	replaying bool
	driving   bool   // drive, not Replay: the invocation may run steps
	pinned    string // the deployment the log's run_started pins the run to
	bytes     int64  // what the applied events' payloads weigh, for the warm cache's bound
	seenUntil int64  // the last slot some invocation applied live; see quiet
	ahead     int    // recorded events after the one being replayed; 0 once live

	patches         map[string]bool      // Patched's answers, by patch ID
	recordedPatches map[string]bool      // patch IDs the log holds a marker for
	received        map[string]bool      // eventKeys of the log's hook messages, against redelivered inbox messages
	folded          bool                 // the invocation folded inbox messages: more may be coming
	inboxRead       []world.InboxMessage // the inbox as the run's read before the lease found it, for the first fold

	lastSlot atomic.Int64 // the last slot applied; read by the watcher
	writing  atomic.Int64 // the last slot of our latest append, set before it is sent; read by the watcher
	ops      []*Op        // by seq-1
	buffer   []pending    // events waiting to be written
	update   *world.RunUpdate

	results    chan stepResult
	heartbeats chan heartbeat // from running attempts, throttled
	closed     chan struct{}
	running    int // step attempts in flight
	// fresh: a step waits for an attempt that does not fit in what is
	// left of this invocation's budget; once nothing runs, hand off.
	fresh bool
	// longStep: the step that waits fits no invocation of this engine;
	// the hand-off goes to Engine.LongSteps.
	longStep bool

	finished bool // the workflow function returned
	output   json.RawMessage
	failure  error // what the workflow function returned
	fatal    error // why the engine must fail the run (nondeterminism, limit, panic)
	terminal bool  // the log holds a terminal event
}

// pending is a buffered event and the identity used to drop it when another
// writer already recorded the same thing.
type pending struct {
	ev  world.Event
	key string
}

func newInvocation(ctx context.Context, e *Engine, run world.Run) *invocation {
	seed := fnv.New64a()
	seed.Write([]byte(run.ID))
	inv := &invocation{
		e:     e,
		sched: newScheduler(),
		rng:   rand.New(rand.NewPCG(seed.Sum64(), 0x9e3779b97f4a7c15)),

		patches:         map[string]bool{},
		recordedPatches: map[string]bool{},
		received:        map[string]bool{},
	}
	inv.begin(ctx, run)
	return inv
}

// begin gives the invocation what belongs to one delivery of the run, not
// to its workflow's state: a new one gets it here, a parked one again when
// it is revived (warm.go), having shed it when it parked.
func (inv *invocation) begin(ctx context.Context, run world.Run) {
	inv.ctx, inv.cancel = context.WithCancelCause(ctx)
	inv.run = run
	inv.openedAt = time.Now()
	inv.lease = newRunLease()
	inv.log = inv.e.newRunLogger(run)
	inv.results = make(chan stepResult)
	// Room for a fan-out's beats while the loop writes; a full
	// channel only defers a heartbeat to the attempt's next.
	inv.heartbeats = make(chan heartbeat, 16)
	inv.closed = make(chan struct{})
}

// close unwinds the workflow's coroutines and stops its steps. Steps that
// ignore their context are left to finish on their own; their results are
// dropped (at-least-once: the next invocation runs them again).
func (inv *invocation) close() {
	inv.end()
	inv.sched.unwind()
}

// end stops what the invocation started beside its coroutines: its steps,
// its log watcher. A parked invocation (warm.go) is ended, not closed.
func (inv *invocation) end() {
	inv.cancel(nil)
	close(inv.closed)
}

func (inv *invocation) ctxHandle() *Ctx { return &Ctx{inv: inv} }

// issue allocates the next op. It is how every durable call starts.
func (inv *invocation) issue(kind OpKind, name, callSite string) *Op {
	inv.guardIssue()
	op := &Op{seq: len(inv.ops) + 1, Kind: kind, Name: name, callSite: callSite}
	inv.ops = append(inv.ops, op)
	return op
}

// guardIssue stops durable calls while coroutines unwind (a user's defer).
func (inv *invocation) guardIssue() {
	if inv.sched.unwinding {
		panic(unwindSignal{})
	}
}

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
		if !inv.terminal && !inv.replaying {
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
		inv.recordedPatches[p.Patch] = true
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
		inv.received[eventKey(ev)] = true
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
