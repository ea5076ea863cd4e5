package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// shippingCode is the version of patchShipping that is "deployed": a test
// changes it between a run's invocations, as a deploy does between a
// run's wake-ups. The versions:
//
//  1. price, sleep an hour, ship standard;
//  2. change "fraud-check" adds a fraud check after pricing, change
//     "express" ships express, each behind Patched;
//  3. the fraud check's old branch deleted, behind DeprecatePatch;
//  4. DeprecatePatch removed too.
var shippingCode atomic.Int32

var (
	shipPrice = workflow.DefineStep("test.patch.price", func(_ context.Context, order string) (string, error) {
		return order + ":priced", nil
	})
	shipFraud = workflow.DefineStep("test.patch.fraud", func(_ context.Context, order string) (bool, error) {
		return true, nil
	})
	shipShip = workflow.DefineStep("test.patch.ship", func(_ context.Context, parcel string) (string, error) {
		return parcel + ":shipped", nil
	})
)

// deprecateLine is the line of the DeprecatePatch call below.
var deprecateLine int

var patchShipping = workflow.Define("test.patch.shipping", func(ctx workflow.Context, order string) (string, error) {
	priced, err := shipPrice.Call(ctx, order)
	if err != nil {
		return "", err
	}
	checked := false
	switch shippingCode.Load() {
	case 2:
		checked = workflow.Patched(ctx, "fraud-check")
	case 3:
		deprecateLine = here() + 1
		workflow.DeprecatePatch(ctx, "fraud-check")
		checked = true
	case 4:
		checked = true
	}
	if checked {
		if _, err := shipFraud.Call(ctx, priced); err != nil {
			return "", err
		}
	}
	workflow.Sleep(ctx, time.Hour)
	speed := "standard"
	if shippingCode.Load() >= 2 && workflow.Patched(ctx, "express") {
		speed = "express"
	}
	if shippingCode.Load() == 2 && workflow.Patched(ctx, "fraud-check") != checked {
		return "", errors.New("Patched changed its answer within a run")
	}
	return shipShip.Call(ctx, priced+"/"+speed)
})

// deployed sets the code version for the rest of a test.
func deployed(t *testing.T, version int32) {
	shippingCode.Store(version)
	t.Cleanup(func() { shippingCode.Store(1) })
}

// shipped runs a shipping run to its end: started on version start, with
// version then deployed while it sleeps.
func shipped(t *testing.T, start, then int32) (string, []world.Event) {
	t.Helper()
	deployed(t, start)
	env := workflowtest.New(t)
	run := workflowtest.Start(env, patchShipping, "o1")
	env.RunUntilIdle()
	deployed(t, then)
	env.Advance(time.Hour)
	out, err := run.Result()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, run.Timeline())
	}
	return out, run.Events()
}

// markers lists the patch IDs a log records, and its steps by call.
func markers(t *testing.T, events []world.Event) (patches []string, steps map[string]string) {
	t.Helper()
	steps = map[string]string{}
	for _, ev := range events {
		var p struct{ Patch, Step string }
		if err := json.Unmarshal(ev.Payload, &p); len(ev.Payload) > 0 && err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case world.PatchMarker:
			patches = append(patches, p.Patch)
		case world.StepCreated:
			steps[ev.CorrelationID] = p.Step
		}
	}
	return patches, steps
}

func TestPatchedKeepsARunInFlightOnTheOldBranch(t *testing.T) {
	out, events := shipped(t, 1, 2)
	// Past "fraud-check" before the deploy: the old branch. Not yet at
	// "express": the new one.
	if out != "o1:priced/express:shipped" {
		t.Errorf("result %q, want the old run to skip the fraud check and ship express", out)
	}
	patches, steps := markers(t, events)
	if strings.Join(patches, ",") != "express" {
		t.Errorf("markers %v, want only express's", patches)
	}
	// Patched is no durable call: the ship step is call #3, as version 1
	// numbered it (price, sleep, ship).
	if want := map[string]string{"1": "test.patch.price", "3": "test.patch.ship"}; !maps.Equal(steps, want) {
		t.Errorf("steps by call %v, want %v", steps, want)
	}
	workflowtest.Replay(t, events) // the completed run replays on version 2
}

func TestPatchedIsTrueForANewRun(t *testing.T) {
	out, events := shipped(t, 2, 2)
	if out != "o1:priced/express:shipped" {
		t.Errorf("result %q", out)
	}
	patches, steps := markers(t, events)
	if strings.Join(patches, ",") != "fraud-check,express" {
		t.Errorf("markers %v, want fraud-check's and express's", patches)
	}
	if want := map[string]string{"1": "test.patch.price", "2": "test.patch.fraud", "4": "test.patch.ship"}; !maps.Equal(steps, want) {
		t.Errorf("steps by call %v, want %v", steps, want)
	}
	workflowtest.Replay(t, events)
}

// A run that completed on the old code replays on the new one: it passed
// both points before the patch.
func TestPatchedReplaysAnOldRunOnTheOldBranch(t *testing.T) {
	out, events := shipped(t, 1, 1)
	if out != "o1:priced/standard:shipped" {
		t.Fatalf("result %q", out)
	}
	deployed(t, 2)
	workflowtest.Replay(t, events)
	// Without Patched, version 2's branches would call the fraud check
	// where the log holds the sleep.
	deployed(t, 4)
	if _, ok := errors.AsType[*workflow.NondeterminismError](workflow.Replay(context.Background(), encode(t, events))); !ok {
		t.Error("the old run replays on code without its branch")
	}
}

func TestDeprecatePatchFailsARunThatNeedsTheOldBranch(t *testing.T) {
	_, old := shipped(t, 1, 2)
	_, fresh := shipped(t, 2, 2)
	deployed(t, 3)
	workflowtest.Replay(t, fresh)
	nd := replayNondeterminism(t, encode(t, old))
	if !strings.Contains(nd.Expected, `old branch of patch "fraud-check"`) ||
		!strings.Contains(nd.Found, "DeprecatePatch at patch_test.go:") || !strings.Contains(nd.Found, ":"+strconv.Itoa(deprecateLine)) {
		t.Errorf("the error does not name the patch and the DeprecatePatch line: %v", nd)
	}
	if want := slotOf(t, old, world.WaitCreated, "2"); nd.Slot != want {
		t.Errorf("error names slot %d, want %d (what the old branch recorded next)", nd.Slot, want)
	}
	deployed(t, 4) // and once DeprecatePatch is gone, its marker is ignored
	workflowtest.Replay(t, fresh)
}

// A run started on DeprecatePatch code still records the marker, so a
// rollback to the code that asks Patched keeps it on the new branch.
func TestDeprecatePatchKeepsRecordingForARollback(t *testing.T) {
	_, events := shipped(t, 3, 3)
	if patches, _ := markers(t, events); !strings.Contains(strings.Join(patches, ","), "fraud-check") {
		t.Fatalf("markers %v, want fraud-check's", patches)
	}
	deployed(t, 2)
	workflowtest.Replay(t, events)
}

// countingWorld counts the appends a worker makes.
type countingWorld struct {
	*memory.World
	appends atomic.Int32
}

func (w *countingWorld) AppendEvents(ctx context.Context, run string, from int64, evs []world.Event, u *world.RunUpdate) ([]world.Event, error) {
	w.appends.Add(1)
	return w.World.AppendEvents(ctx, run, from, evs, u)
}

func (w *countingWorld) AppendLeased(ctx context.Context, owner, run string, from int64, evs []world.Event, u *world.RunUpdate) ([]world.Event, error) {
	w.appends.Add(1)
	return w.World.AppendLeased(ctx, owner, run, from, evs, u)
}

var (
	shipPlain   = workflow.Define("test.patch.plain", func(ctx workflow.Context, order string) (string, error) { return shipPrice.Call(ctx, order) })
	shipPatched = workflow.Define("test.patch.patched", func(ctx workflow.Context, order string) (string, error) {
		if workflow.Patched(ctx, "priced") {
			return shipPrice.Call(ctx, order)
		}
		return "", errors.New("a new run took the old branch")
	})
)

// The marker goes in the append of the next durable write: a patched
// run costs the writes of an unpatched one.
func TestAPatchMarkerCostsNoWrite(t *testing.T) {
	appends := func(wf *workflow.Workflow[string, string]) int32 {
		w := &countingWorld{World: memory.New()}
		worker := workflow.NewWorker(w, workflow.WorkerOptions{})
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go func() { _ = worker.Run(ctx) }()
		run, err := workflow.Start(ctx, workflow.NewClient(w), wf, "o1")
		if err != nil {
			t.Fatal(err)
		}
		if out, err := run.Result(ctx); err != nil || out != "o1:priced" {
			t.Fatalf("%s: %q, %v", wf.Name(), out, err)
		}
		return w.appends.Load()
	}
	plain, patched := appends(shipPlain), appends(shipPatched)
	if patched != plain {
		t.Errorf("a run with a patch marker made %d appends, one without %d", patched, plain)
	}
}
