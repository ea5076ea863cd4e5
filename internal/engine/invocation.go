package engine

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// invocation is one pass of the engine over one run: it replays the log,
// then drives the run live until it finishes, suspends or hands off. What
// serves one phase of that is a part of its own: replay (replay.go), the
// live loop (live.go), the events on their way to the log (outbox.go),
// the run's inbox (inbox.go) and its lease (lease.go).
type invocation struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc // stops running steps, the log watcher and the heartbeat
	e        *Engine
	run      world.Run
	seal     *codec.Run // the run's payload codec; nil for a plain run
	log      *slog.Logger
	span     trace.Span // nil until the log is read
	began    time.Time
	openedAt time.Time // when Process made the invocation: its budget runs from here
	liveAt   time.Time // when it had replayed the log and went live
	outcome  string    // how the invocation ended, for its span and duration

	// The workflow's state, rebuilt by replay and carried on live.
	created  runCreatedPayload
	sched    *scheduler
	rng      *rand.Rand
	now      time.Time       // deterministic workflow time
	driving  bool            // drive, not Replay: the invocation may run steps
	bytes    int64           // what the applied events' payloads weigh, for the warm cache's bound
	patches  map[string]bool // Patched's answers, by patch ID
	lastSlot atomic.Int64    // the last slot applied; read by the watcher
	ops      []*Op           // by seq-1

	finished bool // the workflow function returned
	output   json.RawMessage
	failure  error // what the workflow function returned
	fatal    error // why the engine must fail the run (nondeterminism, limit, panic)
	terminal bool  // the log holds a terminal event

	replay replayState
	live   liveState
	out    outbox
	inbox  inboxState
	lease  *runLease
}

func newInvocation(ctx context.Context, e *Engine, run world.Run) *invocation {
	seed := fnv.New64a()
	seed.Write([]byte(run.ID))
	inv := &invocation{
		e:     e,
		sched: newScheduler(),
		rng:   rand.New(rand.NewPCG(seed.Sum64(), 0x9e3779b97f4a7c15)),

		patches: map[string]bool{},
		replay:  replayState{recordedPatches: map[string]bool{}},
		inbox:   inboxState{received: map[string]bool{}},
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
	inv.live.open()
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
	close(inv.live.closed)
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
