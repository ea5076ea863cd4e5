package flowtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// A worker keeps the runs it suspended warm (their replayed state) and
// reads only the log's tail on the next delivery. On Lambda the next
// delivery often goes to another instance, and the one after that back to
// the first, whose warm state is then stale; these scenarios drive one
// run from two workers, each with its own warm cache, so that a worker
// that trusted its warm state without reading what the other appended
// would run a step again, miss a message, or fail the run as
// nondeterministic.

// ledgerNotes counts the calls of ledgerNote per key and message, and
// holds the calls a scenario blocks until their context ends (a worker
// that dies in the middle of a step).
var ledgerNotes = struct {
	sync.Mutex
	calls map[string]int
	block map[string]chan struct{} // closed when the blocked call has started
}{calls: map[string]int{}, block: map[string]chan struct{}{}}

type ledgerEntry struct {
	Key string `json:"key"`
	N   int    `json:"n"`
}

func (l ledgerEntry) id() string { return fmt.Sprintf("%s/%d", l.Key, l.N) }

var ledgerNote = workflow.DefineStep("flowtest.ledgerNote", func(ctx context.Context, in ledgerEntry) (int, error) {
	ledgerNotes.Lock()
	ledgerNotes.calls[in.id()]++
	started, blocks := ledgerNotes.block[in.id()]
	delete(ledgerNotes.block, in.id())
	ledgerNotes.Unlock()
	if blocks {
		close(started)
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return in.N, nil
})

func ledgerCalls(e ledgerEntry) int {
	ledgerNotes.Lock()
	defer ledgerNotes.Unlock()
	return ledgerNotes.calls[e.id()]
}

// blockLedgerNote makes the next call of the note for e block until its
// context ends; the channel is closed once it has started.
func blockLedgerNote(e ledgerEntry) <-chan struct{} {
	ch := make(chan struct{})
	ledgerNotes.Lock()
	ledgerNotes.block[e.id()] = ch
	ledgerNotes.Unlock()
	return ch
}

// ledger notes each number sent to its hook through a step, and returns
// them when sent a negative one.
var ledger = workflow.Define("flowtest.ledger", func(ctx workflow.Context, key string) ([]int, error) {
	h := workflow.CreateHook[int](ctx, workflow.WithToken(key))
	var noted []int
	for {
		n, err := h.Receive(ctx)
		if err != nil || n < 0 {
			return noted, err
		}
		got, err := ledgerNote.Call(ctx, ledgerEntry{Key: key, N: n})
		if err != nil {
			return nil, err
		}
		noted = append(noted, got)
	}
})

// warmInstances: two workers take turns at one run, message by message,
// and each delivery comes twice (a redelivery): every time a worker gets
// the run back, the other has appended since its warm state was made.
// Every message is noted once, in order, and the run ends with all of
// them; the finished run's redelivery to both warm workers is harmless.
func warmInstances(t *testing.T, e *env) {
	key := unique("warm")
	quiet := workflow.NewClient(unqueued{e.world}) // only the scenario delivers
	run, err := workflow.Start(e.ctx, quiet, ledger, key)
	if err != nil {
		t.Fatal(err)
	}
	workers := []*workflow.Worker{secondWorker(e), secondWorker(e)}
	deliver := func(i int) {
		t.Helper()
		for _, w := range []*workflow.Worker{workers[i%2], workers[i%2]} {
			if err := w.Process(e.ctx, run.ID); err != nil {
				t.Fatalf("delivery %d: %v", i, err)
			}
		}
	}
	deliver(0) // to the hook
	const messages = 6
	for n := range messages {
		if err := workflow.ResumeHook(e.ctx, quiet, key, n); err != nil {
			t.Fatal(err)
		}
		deliver(n + 1)
	}
	if err := workflow.ResumeHook(e.ctx, quiet, key, -1); err != nil {
		t.Fatal(err)
	}
	deliver(messages + 1)
	deliver(messages + 2) // the finished run's redelivery, to the other worker
	got := result(t, e, run)
	if want := []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("the run noted %v, want %v", got, want)
	}
	for n := range messages {
		if c := ledgerCalls(ledgerEntry{Key: key, N: n}); c != 1 {
			t.Errorf("message %d was noted %d times, want once", n, c)
		}
	}
}

// dyingWorld is a worker's view of the World that goes dead at once, as
// the worker's process would when killed: every write and lease renewal
// after die fails, and what it buffered never lands.
type dyingWorld struct {
	world.World
	dead atomic.Bool
}

var errDead = errors.New("flowtest: this worker is dead")

func (w *dyingWorld) AppendEvents(ctx context.Context, runID string, from int64, evs []world.Event, u *world.RunUpdate) ([]world.Event, error) {
	if w.dead.Load() {
		return nil, errDead
	}
	return w.World.AppendEvents(ctx, runID, from, evs, u)
}

func (w *dyingWorld) AppendLeased(ctx context.Context, owner, runID string, from int64, evs []world.Event, u *world.RunUpdate) ([]world.Event, error) {
	if w.dead.Load() {
		return nil, errDead
	}
	return w.World.AppendLeased(ctx, owner, runID, from, evs, u)
}

func (w *dyingWorld) RenewLease(ctx context.Context, runID string, lease world.Lease) error {
	if w.dead.Load() {
		return errDead
	}
	return w.World.RenewLease(ctx, runID, lease)
}

func (w *dyingWorld) ReleaseLease(ctx context.Context, runID string, r world.Release) (int64, error) {
	if w.dead.Load() {
		return 0, errDead
	}
	return w.World.ReleaseLease(ctx, runID, r)
}

func (w *dyingWorld) Enqueue(ctx context.Context, msg world.Message) error {
	if w.dead.Load() {
		return errDead
	}
	return w.World.Enqueue(ctx, msg)
}

// warmStateOutlivesACrash: worker A suspends the run (warm), worker B
// takes the next message and dies in the middle of its step, after the
// step's start reached the log. A's warm state is from before all of
// that; once B's lease lapses, A reads the tail, takes B's attempt for
// interrupted, runs the step again and carries the run on. Then A and a
// fresh worker finish it.
func warmStateOutlivesACrash(t *testing.T, e *env) {
	key := unique("warmcrash")
	quiet := workflow.NewClient(unqueued{e.world})
	run, err := workflow.Start(e.ctx, quiet, ledger, key)
	if err != nil {
		t.Fatal(err)
	}
	a := secondWorker(e)
	if err := a.Process(e.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	waitForHook(t, e, key)
	crashed := ledgerEntry{Key: key, N: 7}
	started := blockLedgerNote(crashed)
	if err := workflow.ResumeHook(e.ctx, quiet, key, crashed.N); err != nil {
		t.Fatal(err)
	}
	dying := &dyingWorld{World: e.world}
	const lease = 300 * time.Millisecond
	bCtx, killB := context.WithCancel(e.ctx)
	bDone := make(chan struct{})
	go func() {
		defer close(bDone)
		_ = workflow.NewWorker(dying, workflow.WorkerOptions{Logger: e.log, LeaseTTL: lease}).Process(bCtx, run.ID)
	}()
	select {
	case <-started:
	case <-e.ctx.Done():
		t.Fatal("the step never started on worker B")
	}
	waitForEvent(t, e, run.ID, world.StepStarted)
	// A killed process stops everything at once: with its context alive,
	// B could read on past its death and run a later step that can never
	// land (on a loaded machine it did, noting 8 twice).
	dying.dead.Store(true)
	killB()
	<-bDone
	// A's delivery is deferred while B's lease lives; it drives the run
	// once the lease has lapsed.
	for !hasEvent(t, e, run.ID, world.StepCompleted) {
		if err := a.Process(e.ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		select {
		case <-e.ctx.Done():
			t.Fatal("worker A never took the run over")
		case <-time.After(lease / 3):
		}
	}
	if err := workflow.ResumeHook(e.ctx, quiet, key, 8); err != nil {
		t.Fatal(err)
	}
	if err := a.Process(e.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := workflow.ResumeHook(e.ctx, quiet, key, -1); err != nil {
		t.Fatal(err)
	}
	if err := secondWorker(e).Process(e.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if got := result(t, e, run); !slices.Equal(got, []int{7, 8}) {
		t.Fatalf("the run noted %v, want [7 8]", got)
	}
	if c := ledgerCalls(crashed); c != 2 {
		t.Errorf("the crashed note ran %d times, want twice (B's attempt and A's)", c)
	}
	if c := ledgerCalls(ledgerEntry{Key: key, N: 8}); c != 1 {
		t.Errorf("the note after the crash ran %d times, want once", c)
	}
}

func hasEvent(t *testing.T, e *env, runID string, typ world.EventType) bool {
	t.Helper()
	evs, err := e.world.Events(e.ctx, runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(evs, func(ev world.Event) bool { return ev.Type == typ })
}

// waitForEvent waits until the run's log holds an event of type typ.
func waitForEvent(t *testing.T, e *env, runID string, typ world.EventType) {
	t.Helper()
	for !hasEvent(t, e, runID, typ) {
		select {
		case <-e.ctx.Done():
			t.Fatalf("the log of run %s never got a %s", runID, typ)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
