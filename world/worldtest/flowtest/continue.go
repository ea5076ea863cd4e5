package flowtest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// A run that continues as new ends and starts its successor as one step
// for its callers: Result on the first run's handle follows the chain,
// every successor starts with a fresh log and claims the hook token its
// predecessor released, and a crash between a run's end and its
// successor's creation is repaired by the redelivery, with exactly one
// successor. The engine warns once as a run's log nears its limit, in the
// invocation that takes it there, however many invocations drive the run.
var continueScenarios = []scenario{
	{"ContinueAsNewChain", continueAsNewChain},
	{"ContinueAsNewSurvivesACrash", continueAsNewSurvivesACrash},
	{"ContinueAsNewChildReportsAtTheEnd", continueAsNewChildReportsAtTheEnd},
	{"CeilingWarnedOnceAcrossInvocations", ceilingWarnedOnceAcrossInvocations},
}

// chainMaxEvents is the event limit of the chain scenarios' worker: the
// first run's 30 steps (about 95 events) take its log past the warning at
// 80%, not to the limit; its successors write a dozen each.
const chainMaxEvents = 110

// chainLeg is the state one run of the chain hands the next.
type chainLeg struct {
	Token string `json:"token"` // "" for a chain without a hook
	Gen   int    `json:"gen"`
	Steps int    `json:"steps"` // steps this run takes before it continues
	Total int    `json:"total"`
}

var addOne = workflow.DefineStep("flowtest.addOne", func(_ context.Context, n int) (int, error) { return n + 1, nil })

// chain adds what each run's hook receives (or 1 per run) and the steps it
// takes, and continues as new until its fourth run, which returns the sum.
var chain = workflow.Define("flowtest.chain", func(ctx workflow.Context, leg chainLeg) (int, error) {
	for range leg.Steps {
		n, err := addOne.Call(ctx, leg.Total)
		if err != nil {
			return 0, err
		}
		leg.Total = n
	}
	if leg.Token != "" {
		v, err := workflow.CreateHook[int](ctx, workflow.WithToken(leg.Token)).Receive(ctx)
		if err != nil {
			return 0, err
		}
		leg.Total += v
	}
	if leg.Gen == 3 {
		return leg.Total, nil
	}
	return 0, workflow.ContinueAsNew(ctx, chainLeg{Token: leg.Token, Gen: leg.Gen + 1, Steps: 1, Total: leg.Total})
})

func continueAsNewChain(t *testing.T, e *env) {
	token := unique("chain")
	run := start(t, e, chain, chainLeg{Token: token, Steps: 30})
	holders := map[string]bool{}
	for gen := range 4 {
		holder := waitForNewHolder(t, e, token, holders)
		if gen == 0 && holder != run.ID {
			t.Fatalf("the first hook is held by %s, not the first run %s", holder, run.ID)
		}
		if err := workflow.ResumeHook(e.ctx, e.client, token, 100); err != nil {
			t.Fatalf("resume the hook of run %d: %v", gen, err)
		}
	}
	if got := result(t, e, run); got != 30+3+400 {
		t.Fatalf("Result on the first run's handle: %d, want %d: it did not follow the chain to its end", got, 30+3+400)
	}
	if s, err := run.Status(e.ctx); err != nil || s != workflow.StatusCompleted {
		t.Fatalf("Status on the first run's handle: %q (%v), want the last run's completed", s, err)
	}
	first, err := e.world.GetRun(e.ctx, run.ID)
	if err != nil || first.Status != world.StatusContinued {
		t.Fatalf("the first run is %q (%v), want continued", first.Status, err)
	}
	for id := range holders {
		r, err := e.world.GetRun(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if id != run.ID && r.LastSlot >= first.LastSlot/3 {
			t.Errorf("successor %s starts with %d events, the first run ended with %d: its log is not fresh", id, r.LastSlot, first.LastSlot)
		}
	}
	if n := e.ceilingWarnings(); n != 1 {
		t.Errorf("the log nearing its limit was reported %d times, want once", n)
	}
}

func continueAsNewSurvivesACrash(t *testing.T, e *env) {
	key := unique("crash")
	quiet := workflow.NewClient(unqueued{e.world}) // no delivery: the test drives the first run
	run, err := workflow.Start(e.ctx, quiet, chain, chainLeg{Steps: 1}, workflow.WithAttributes(map[string]string{"chain": key}))
	if err != nil {
		t.Fatal(err)
	}
	crashing := &failFirstStart{World: unqueued{e.world}}
	err = workflow.NewWorker(crashing, workflow.WorkerOptions{Logger: e.log}).Process(e.ctx, run.ID)
	if !errors.Is(err, errCrashed) {
		t.Fatalf("the invocation that ended the run returned %v, want the injected failure to create its successor", err)
	}
	if r, err := e.world.GetRun(e.ctx, run.ID); err != nil || r.Status != world.StatusContinued {
		t.Fatalf("after the crash the first run is %q (%v), want continued", r.Status, err)
	}
	for range 2 { // the redelivery, and one more
		if err := workflow.NewWorker(e.world, workflow.WorkerOptions{Logger: e.log}).Process(e.ctx, run.ID); err != nil {
			t.Fatalf("redelivery: %v", err)
		}
	}
	if got := result(t, e, run); got != 4 {
		t.Fatalf("Result on the first run's handle: %d, want 4", got)
	}
	page, err := e.world.ListRuns(e.ctx, world.RunFilter{Attributes: map[string]string{"chain": key}})
	if err != nil {
		t.Fatal(err)
	}
	var continued, completed int
	for _, r := range page.Runs {
		switch r.Status {
		case world.StatusContinued:
			continued++
		case world.StatusCompleted:
			completed++
		}
	}
	if len(page.Runs) != 4 || continued != 3 || completed != 1 {
		t.Fatalf("the chain has %d runs (%d continued, %d completed), want 4: one successor per run", len(page.Runs), continued, completed)
	}
}

// chainParent awaits a chain started as its child and says what it got.
var chainParent = workflow.Define("flowtest.chainParent", func(ctx workflow.Context, _ struct{}) (int, error) {
	return chain.StartChild(ctx, chainLeg{Steps: 1}).Get(ctx)
})

func continueAsNewChildReportsAtTheEnd(t *testing.T, e *env) {
	run := start(t, e, chainParent, struct{}{})
	if got := result(t, e, run); got != 4 {
		t.Fatalf("the parent got %d from its child, want 4: the chain's last result, not the first run's end", got)
	}
}

// ceilingLeg is the input of ceilingCross.
type ceilingLeg struct {
	Token  string `json:"token"`
	Before int    `json:"before"`
	After  int    `json:"after"`
}

// ceilingCross takes Before steps, waits for a message on its hook, takes
// After steps and waits for another.
var ceilingCross = workflow.Define("flowtest.ceilingCross", func(ctx workflow.Context, leg ceilingLeg) (int, error) {
	hook := workflow.CreateHook[int](ctx, workflow.WithToken(leg.Token))
	total := 0
	for _, steps := range []int{leg.Before, leg.After} {
		for range steps {
			n, err := addOne.Call(ctx, total)
			if err != nil {
				return 0, err
			}
			total = n
		}
		v, err := hook.Receive(ctx)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
})

// ceilingWarnedOnceAcrossInvocations drives a run by three invocations on
// fresh workers, as a Lambda function's cold instances would: the first
// stops short of the ceiling, the second crosses it, the third replays
// past it. Only the second warns.
func ceilingWarnedOnceAcrossInvocations(t *testing.T, e *env) {
	token := unique("ceiling")
	quiet := workflow.NewClient(unqueued{e.world}) // no delivery: the test drives the run
	run, err := workflow.Start(e.ctx, quiet, ceilingCross, ceilingLeg{Token: token, Before: 25, After: 5})
	if err != nil {
		t.Fatal(err)
	}
	ceiling := int64(chainMaxEvents * 8 / 10)
	invoke := func(what string) world.Run {
		t.Helper()
		w := workflow.NewWorker(unqueued{e.world}, workflow.WorkerOptions{MaxEvents: chainMaxEvents, Logger: e.log})
		if err := w.Process(e.ctx, run.ID); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		r, err := e.world.GetRun(e.ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := invoke("the first invocation"); r.LastSlot >= ceiling || e.ceilingWarnings() != 0 {
		t.Fatalf("after the first invocation the log is at slot %d (ceiling %d) with %d warnings, want below it and none", r.LastSlot, ceiling, e.ceilingWarnings())
	}
	for i, what := range []string{"the second invocation", "the third invocation"} {
		if err := workflow.ResumeHook(e.ctx, quiet, token, 100); err != nil {
			t.Fatalf("resume before %s: %v", what, err)
		}
		if r := invoke(what); i == 0 && r.LastSlot < ceiling {
			t.Fatalf("after %s the log is at slot %d, short of the ceiling %d: the scenario crosses nothing", what, r.LastSlot, ceiling)
		}
		if n := e.ceilingWarnings(); n != 1 {
			t.Fatalf("after %s the ceiling was reported %d times, want once: by the invocation that crossed it", what, n)
		}
	}
	if got := result(t, e, run); got != 30+200 {
		t.Fatalf("the run returned %d, want %d", got, 30+200)
	}
}

// waitForNewHolder waits until token is held by a run not in seen, adds it
// and returns its ID.
func waitForNewHolder(t *testing.T, e *env, token string, seen map[string]bool) string {
	t.Helper()
	for {
		if info := waitForHook(t, e, token); !seen[info.RunID] {
			seen[info.RunID] = true
			return info.RunID
		}
		if e.ctx.Err() != nil {
			t.Fatalf("no run after %v claimed hook %q", seen, token)
		}
	}
}

var errCrashed = errors.New("flowtest: injected crash before the successor exists")

// failFirstStart is a World whose first StartRun fails, as if the
// invocation died after writing its run's end.
type failFirstStart struct {
	world.World
	failed atomic.Bool
}

func (f *failFirstStart) StartRun(ctx context.Context, run world.Run, first []world.Event, msg world.Message) (world.Run, error) {
	if f.failed.CompareAndSwap(false, true) {
		return world.Run{}, errCrashed
	}
	return f.World.StartRun(ctx, run, first, msg)
}

// ceilingLog counts the engine's warnings that a log nears its limit.
type ceilingLog struct {
	mu    sync.Mutex
	lines int
}

func (c *ceilingLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for line := range bytes.Lines(p) {
		if strings.Contains(string(line), "workflow.ContinueAsNew") && strings.Contains(string(line), "max_events=") {
			c.lines++
		}
	}
	return len(p), nil
}
