package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// The engine's own tests drive an invocation step by step through the
// seams the live loop uses (replay, materialize, a step's result, flush),
// on a real in-memory World, so that a test decides what another writer
// appends in between.

const testRunID = "run-1"

// plainErrors is an error codec that keeps the message only and never
// retries: the engine's tests need no more.
type plainErrors struct{}

func (plainErrors) Encode(err error) json.RawMessage {
	return mustJSON(map[string]string{"message": err.Error()})
}
func (plainErrors) Retry(error) (bool, time.Duration) { return false, 0 }
func (plainErrors) Decode(raw json.RawMessage) error {
	var r struct{ Message string }
	_ = json.Unmarshal(raw, &r)
	return errors.New(r.Message)
}

// newTestEngine returns an engine on w that knows one workflow, "test".
func newTestEngine(w world.World, wf WorkflowFunc) *Engine {
	reg := NewRegistry()
	reg.AddWorkflow(&WorkflowDef{Name: "test", Fn: wf})
	return &Engine{World: w, Registry: reg, Errors: plainErrors{}}
}

// startTestRun creates the run "run-1" of the workflow "test".
func startTestRun(t *testing.T, w world.World) {
	t.Helper()
	if err := startRun(context.Background(), w, NewRun{ID: testRunID, Workflow: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// replayed returns an invocation of the run that has replayed its log, as
// drive does before it goes live.
func replayed(t *testing.T, e *Engine) *invocation {
	t.Helper()
	ctx := context.Background()
	run, err := e.World.GetRun(ctx, testRunID)
	if err != nil {
		t.Fatal(err)
	}
	events, err := e.World.Events(ctx, testRunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	inv := newInvocation(ctx, e, run)
	t.Cleanup(inv.close)
	inv.replayLog(events, "")
	if inv.fatal != nil {
		t.Fatal(inv.fatal)
	}
	return inv
}

// awaitStep is a workflow that calls one step and returns its output.
func awaitStep(def *StepDef) WorkflowFunc {
	return func(c *Ctx, _ json.RawMessage) (json.RawMessage, error) {
		out, _ := c.Await(c.CallStep(def, nil, "test"))
		return out, nil
	}
}

func returning(output string) *StepDef {
	return &StepDef{Name: "s", MaxRetries: 3, Fn: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return mustJSON(output), nil
	}}
}

// logOf returns the run's log as "type/correlation" strings, with each
// step_started's attempt and each step_completed's output.
func logOf(t *testing.T, w world.World) []string {
	t.Helper()
	events, err := w.Events(context.Background(), testRunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, ev := range events {
		if ev.Slot != int64(i+1) {
			t.Fatalf("event %d sits in slot %d", i+1, ev.Slot)
		}
		s := string(ev.Type)
		if ev.CorrelationID != "" {
			s += "/" + ev.CorrelationID
		}
		switch ev.Type {
		case world.StepStarted, world.StepRetrying, world.StepCompleted:
			s += " " + string(ev.Payload)
		}
		out = append(out, s)
	}
	return out
}

// appendEvents appends events as another writer would, at slot from.
func appendEvents(t *testing.T, w world.World, from int64, update *world.RunUpdate, events ...world.Event) {
	t.Helper()
	for i := range events {
		events[i].CreatedAt = time.Now()
	}
	if _, err := w.AppendEvents(context.Background(), testRunID, from, events, update); err != nil {
		t.Fatal(err)
	}
}

func event(typ world.EventType, corr string, payload any) world.Event {
	ev := world.Event{Type: typ, CorrelationID: corr}
	if payload != nil {
		ev.Payload = mustJSON(payload)
	}
	return ev
}

func newMemoryWorld(t *testing.T) *memory.World {
	w := memory.New()
	t.Cleanup(func() { _ = w.Close() })
	return w
}
