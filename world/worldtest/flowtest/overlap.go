package flowtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// On Lambda a second function instance gets a run's message whenever one
// arrives while another instance still works on the run (a hook resumed
// during a long step, a redelivery, a timer due mid-step). These scenarios
// drive one run with two Workers, separate engines on one World, as two
// instances would be.

// slowCalls counts the attempts of slowStep and tells who waits that one
// has started, per key.
var slowCalls = struct {
	sync.Mutex
	n       map[string]int
	started map[string]chan struct{}
}{n: map[string]int{}, started: map[string]chan struct{}{}}

func slowStarted(key string) chan struct{} {
	slowCalls.Lock()
	defer slowCalls.Unlock()
	ch := slowCalls.started[key]
	if ch == nil {
		ch = make(chan struct{})
		slowCalls.started[key] = ch
	}
	return ch
}

func slowAttempts(key string) int {
	slowCalls.Lock()
	defer slowCalls.Unlock()
	return slowCalls.n[key]
}

// slowStep takes 1.5 s, far longer than the 25 ms after which its
// step_started reaches the log, and has no retries: an attempt taken for
// interrupted fails the run, and a second attempt shows in the count.
var slowStep = workflow.DefineStep("flowtest.slow", slow, workflow.WithMaxRetries(0))

// slow returns which attempt of key's step it is, after 1.5 s.
func slow(ctx context.Context, key string) (int, error) {
	slowCalls.Lock()
	slowCalls.n[key]++
	n := slowCalls.n[key]
	slowCalls.Unlock()
	if n == 1 {
		close(slowStarted(key))
	}
	select {
	case <-time.After(1500 * time.Millisecond):
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

var slowOne = workflow.Define("flowtest.slowOne", func(ctx workflow.Context, key string) (int, error) {
	return slowStep.Call(ctx, key)
})

// secondWorker is another instance's worker on the same World.
func secondWorker(e *env) *workflow.Worker {
	return workflow.NewWorker(e.world, workflow.WorkerOptions{Logger: e.log})
}

// waitStarted waits until the slow step of key runs, then 100 ms more.
func waitStarted(t *testing.T, e *env, key string) {
	t.Helper()
	select {
	case <-slowStarted(key):
	case <-e.ctx.Done():
		t.Fatal("the slow step never started")
	}
	time.Sleep(100 * time.Millisecond)
}

// overlappingInvocations: a second invocation 100 ms into a step neither
// fails it as interrupted nor runs it again; the run completes with the
// step run once.
func overlappingInvocations(t *testing.T, e *env) {
	key := unique("overlap")
	run := start(t, e, slowOne, key)
	waitStarted(t, e, key)
	if err := secondWorker(e).Process(e.ctx, run.ID); err != nil {
		t.Fatalf("second invocation: %v", err)
	}
	if got := result(t, e, run); got != 1 {
		t.Fatalf("the run saw attempt %d of its step, want 1", got)
	}
	if n := slowAttempts(key); n != 1 {
		t.Fatalf("the step ran %d times, want once", n)
	}
	started := 0
	evs, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == world.StepStarted {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("the log records %d step attempts, want 1", started)
	}
}

// slowThenHook runs the slow step and waits for a hook message beside it.
var slowThenHook = workflow.Define("flowtest.slowThenHook", func(ctx workflow.Context, key string) (string, error) {
	h := workflow.CreateHook[string](ctx, workflow.WithToken(key))
	if _, err := slowStep.Call(ctx, key); err != nil {
		return "", err
	}
	return h.Receive(ctx)
})

// resumeDuringAStep: a hook resumed while a step runs is delivered to a
// second invocation, which finds the run driven by the first and leaves it
// the message; the first applies it as soon as the step is done, without
// waiting for any redelivery (the scenario's deadline is far shorter than
// a lease).
func resumeDuringAStep(t *testing.T, e *env) {
	key := unique("resume-mid-step")
	run := start(t, e, slowThenHook, key)
	waitStarted(t, e, key)
	if err := workflow.ResumeHook(e.ctx, e.client, key, "hello"); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := secondWorker(e).Process(e.ctx, run.ID); err != nil {
		t.Fatalf("second invocation: %v", err)
	}
	if got := result(t, e, run); got != "hello" {
		t.Fatalf("the run got %q", got)
	}
	if n := slowAttempts(key); n != 1 {
		t.Fatalf("the step ran %d times, want once", n)
	}
}

// interposed is a World with a scenario's eyes on some calls.
type interposed struct {
	world.World
	beforeRelease func()              // runs before each ReleaseLease
	enqueued      func(world.Message) // sees each message enqueued
	appended      func(runID string)  // sees each append to a log
	stalled       bool                // renewals are lost: the lease lapses
}

func (w interposed) AppendEvents(ctx context.Context, runID string, from int64, evs []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	if w.appended != nil {
		w.appended(runID)
	}
	return w.World.AppendEvents(ctx, runID, from, evs, update)
}

func (w interposed) AppendLeased(ctx context.Context, owner, runID string, from int64, evs []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	if w.appended != nil {
		w.appended(runID)
	}
	return w.World.AppendLeased(ctx, owner, runID, from, evs, update)
}

func (w interposed) RenewLease(ctx context.Context, runID string, lease world.Lease) error {
	if w.stalled {
		return nil // the renewal never reaches the World
	}
	return w.World.RenewLease(ctx, runID, lease)
}

func (w interposed) ReleaseLease(ctx context.Context, runID string, release world.Release) (int64, error) {
	if w.beforeRelease != nil {
		w.beforeRelease()
	}
	return w.World.ReleaseLease(ctx, runID, release)
}

func (w interposed) Enqueue(ctx context.Context, msg world.Message) error {
	if w.enqueued != nil {
		w.enqueued(msg)
	}
	return w.World.Enqueue(ctx, msg)
}

func (w interposed) StartRun(ctx context.Context, run world.Run, first []world.Event, msg world.Message) (world.Run, error) {
	if w.enqueued != nil {
		w.enqueued(msg)
	}
	return w.World.StartRun(ctx, run, first, msg)
}

// unqueued is a World whose messages are lost: a run started or resumed
// through it is woken by nobody but the scenario.
type unqueued struct{ world.World }

func (unqueued) Enqueue(context.Context, world.Message) error { return nil }

// StartRun stores the run without its first message.
func (u unqueued) StartRun(ctx context.Context, run world.Run, first []world.Event, _ world.Message) (world.Run, error) {
	return u.CreateRun(ctx, run, first)
}

var waitHook = workflow.Define("flowtest.waitHook", func(ctx workflow.Context, token string) (string, error) {
	return workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
})

// releaseSeesLateEvents: a hook message lands after the invocation's last
// look at the log and before it releases the lease, and the message's
// delivery went to another invocation, which deferred it to the holder.
// The holder sees it on release and drives on: the run completes within
// the one Process call, with no message left to wake it.
func releaseSeesLateEvents(t *testing.T, e *env) {
	key := unique("late")
	quiet := workflow.NewClient(unqueued{e.world})
	run, err := workflow.Start(e.ctx, quiet, waitHook, key)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	w := interposed{World: e.world, beforeRelease: func() {
		once.Do(func() {
			if err := workflow.ResumeHook(e.ctx, quiet, key, "late"); err != nil {
				t.Errorf("resume: %v", err)
			}
		})
	}}
	if err := workflow.NewWorker(w, workflow.WorkerOptions{Logger: e.log}).Process(e.ctx, run.ID); err != nil {
		t.Fatalf("Process: %v", err)
	}
	got, err := e.world.GetRun(e.ctx, run.ID)
	if err != nil || got.Status != world.StatusCompleted {
		t.Fatalf("after Process the run is %q (%v): the message that came in before the release was left unapplied", got.Status, err)
	}
	if out := result(t, e, run); out != "late" {
		t.Fatalf("the run got %q", out)
	}
}

// secondDeliveryIsDeferred: the second invocation neither drops its
// message nor acts on it beside the holder; it queues it again, to come
// back once the holder's lease would lapse if the holder died.
func secondDeliveryIsDeferred(t *testing.T, e *env) {
	key := unique("deferred")
	run := start(t, e, slowOne, key)
	waitStarted(t, e, key)
	var mu sync.Mutex
	var queued []world.Message
	w := interposed{World: e.world, enqueued: func(m world.Message) {
		mu.Lock()
		queued = append(queued, m)
		mu.Unlock()
	}}
	at := time.Now()
	if err := workflow.NewWorker(w, workflow.WorkerOptions{Logger: e.log}).Process(e.ctx, run.ID); err != nil {
		t.Fatalf("second invocation: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(queued) != 1 || queued[0].RunID != run.ID {
		t.Fatalf("the second invocation queued %+v, want its message for run %s again", queued, run.ID)
	}
	if d := queued[0].DeliverAt.Sub(at); d < time.Second || d > 2*time.Minute {
		t.Fatalf("the deferred message is due %v after the second invocation; want it back once the holder's lease would lapse", d)
	}
	if got := result(t, e, run); got != 1 {
		t.Fatalf("the run saw attempt %d of its step, want 1", got)
	}
}

// slowRetried is slowStep with retries, and slowOneRetried its workflow.
var slowRetried = workflow.DefineStep("flowtest.slowRetried", slow)

var slowOneRetried = workflow.Define("flowtest.slowOneRetried", func(ctx workflow.Context, key string) (int, error) {
	return slowRetried.Call(ctx, key)
})

// stalledHolderIsFenced: an invocation whose renewals stop (a long GC
// pause, a partition) loses its lease once the lease lapses. Another
// invocation takes the run over and counts the stalled one's attempt as
// interrupted; the stalled one, when its step returns, cannot commit its
// result and stops without an error. The log holds one result: the new
// holder's.
func stalledHolderIsFenced(t *testing.T, e *env) {
	key := unique("stalled")
	run, err := workflow.Start(e.ctx, workflow.NewClient(unqueued{e.world}), slowOneRetried, key)
	if err != nil {
		t.Fatal(err)
	}
	stalled := interposed{World: e.world, stalled: true}
	first := make(chan error, 1)
	go func() {
		first <- workflow.NewWorker(stalled, workflow.WorkerOptions{Logger: e.log, LeaseTTL: 300 * time.Millisecond}).Process(e.ctx, run.ID)
	}()
	waitStarted(t, e, key)
	time.Sleep(300 * time.Millisecond) // past the stalled holder's lease
	if err := secondWorker(e).Process(e.ctx, run.ID); err != nil {
		t.Fatalf("the invocation taking over: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the fenced invocation: %v, want a quiet stop", err)
	}
	if got := result(t, e, run); got != 2 {
		t.Fatalf("the run's result is attempt %d, want the second: the fenced attempt's result reached the log", got)
	}
	evs, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	completed := 0
	for _, ev := range evs {
		if ev.Type == world.StepCompleted {
			completed++
		}
	}
	if completed != 1 {
		t.Fatalf("the log records %d step results, want 1", completed)
	}
}
