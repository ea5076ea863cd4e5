package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// failAfter bounds how long a test waits for something that must happen;
// it only matters when the engine is broken.
const failAfter = 10 * time.Second

// A live invocation starts a step's first attempt where the workflow
// issues it: here the workflow code waits, before it issues the second
// step or blocks, for the first step to be running. With a start only
// once the workflow blocks, it would wait in vain. The log is the same as
// with a lazy start: each step's creation and start in issue order,
// written with the results.
func TestStepStartsWhereIssued(t *testing.T) {
	w := newMemoryWorld(t)
	running := make(chan struct{}, 2)
	def := &StepDef{Name: "s", Fn: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		running <- struct{}{}
		return mustJSON("ok"), nil
	}}
	e := newTestEngine(w, func(c *Ctx, _ json.RawMessage) (json.RawMessage, error) {
		first := c.CallStep(def, nil, "test")
		if !c.Replaying() {
			select {
			case <-running:
			case <-time.After(failAfter):
				return nil, errors.New("the first step did not start before the workflow blocked")
			}
		}
		second := c.CallStep(def, nil, "test")
		c.Await(first)
		c.Await(second)
		return mustJSON("done"), nil
	})
	startTestRun(t, w)
	if err := e.Process(context.Background(), testRunID); err != nil {
		t.Fatal(err)
	}
	run, err := w.GetRun(context.Background(), testRunID)
	if err != nil {
		t.Fatal(err)
	}
	if string(run.Output) != `"done"` {
		t.Fatalf("run %s, output %s, error %s", run.Status, run.Output, run.Error)
	}
	got := logOf(t, w)
	want := []string{"run_created", "run_started",
		"step_created/1", `step_started/1 {"attempt":1}`, "step_created/2", `step_started/2 {"attempt":1}`}
	if !slices.Equal(got[:len(want)], want) {
		t.Fatalf("log starts %q, want %q", got, want)
	}
	if err := e.Replay(context.Background(), mustEvents(t, w)); err != nil {
		t.Fatalf("the log does not replay: %v", err)
	}
}

// A step the workflow issues and never awaits starts at once too; when
// the workflow returns, the run ends without waiting for it: its attempt
// is cancelled (its context is done) and its result is not recorded, but
// the log records that it was created and started.
func TestUnawaitedStepIsCancelledWhenTheWorkflowReturns(t *testing.T) {
	w := newMemoryWorld(t)
	called := make(chan error, 1)
	def := &StepDef{Name: "fire-and-forget", Fn: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done() // the run must not wait for this step
		called <- ctx.Err()
		return mustJSON("late"), nil
	}}
	e := newTestEngine(w, func(c *Ctx, _ json.RawMessage) (json.RawMessage, error) {
		c.CallStep(def, nil, "test")
		return mustJSON("returned"), nil
	})
	startTestRun(t, w)
	if err := e.Process(context.Background(), testRunID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-called:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the step's context ended with %v, want it cancelled", err)
		}
	case <-time.After(failAfter):
		t.Fatal("the unawaited step never started")
	}
	run, err := w.GetRun(context.Background(), testRunID)
	if err != nil {
		t.Fatal(err)
	}
	if string(run.Output) != `"returned"` {
		t.Fatalf("run %s, output %s, error %s", run.Status, run.Output, run.Error)
	}
	want := []string{"run_created", "run_started", "step_created/1", `step_started/1 {"attempt":1}`, "run_completed"}
	if got := logOf(t, w); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
	if err := e.Replay(context.Background(), mustEvents(t, w)); err != nil {
		t.Fatalf("the log does not replay: %v", err)
	}
}

// Replaying a log (the Replay check) starts no step, even past the log's
// end, where a live invocation would.
func TestReplayStartsNoStep(t *testing.T) {
	w := newMemoryWorld(t)
	attempts := -1
	e := newTestEngine(w, func(c *Ctx, _ json.RawMessage) (json.RawMessage, error) {
		op := c.CallStep(returning("ok"), nil, "test")
		attempts = op.Attempts()
		c.Await(op)
		return nil, nil
	})
	startTestRun(t, w)
	if err := e.Replay(context.Background(), mustEvents(t, w)); err != nil {
		t.Fatal(err)
	}
	if attempts != 0 {
		t.Fatalf("Replay started %d attempts of a step", attempts)
	}
}

func mustEvents(t *testing.T, w world.World) []world.Event {
	t.Helper()
	events, err := w.Events(context.Background(), testRunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return events
}
