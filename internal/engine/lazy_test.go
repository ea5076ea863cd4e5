package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// stepLog is a run's log whose one step recorded payloads that are not
// JSON: an input and an output no replay may decode.
func stepLog() []world.Event {
	at := time.Now()
	evs := []world.Event{
		{Type: world.RunCreated, Payload: json.RawMessage(`{"workflow":"test"}`)},
		{Type: world.RunStarted},
		{Type: world.StepCreated, CorrelationID: "1", Payload: json.RawMessage(`{"step":"s","input":{not json}`)},
		{Type: world.StepStarted, CorrelationID: "1", Payload: json.RawMessage(`{"attempt":1}`)},
		{Type: world.StepCompleted, CorrelationID: "1", Payload: json.RawMessage(`{"output":{not json}`)},
		{Type: world.RunCompleted, Payload: json.RawMessage(`{"output":"done"}`)},
	}
	for i := range evs {
		evs[i].RunID, evs[i].Slot, evs[i].CreatedAt = testRunID, int64(i+1), at
	}
	return evs
}

// Replay never decodes a recorded step's input, and decodes its output
// only when the workflow reads it: a log whose step payloads do not
// decode replays as long as the workflow does not await the step, and
// fails as corrupted once it does.
func TestReplayDecodesOnlyWhatTheWorkflowReads(t *testing.T) {
	step := &StepDef{Name: "s"}
	for _, awaits := range []bool{false, true} {
		e := newTestEngine(nil, func(c *Ctx, _ json.RawMessage) (json.RawMessage, error) {
			op := c.CallStep(step, json.RawMessage(`1`), "here")
			if awaits {
				c.Await(op)
			}
			return json.RawMessage(`"done"`), nil
		})
		err := e.Replay(context.Background(), stepLog())
		switch {
		case !awaits && err != nil:
			t.Errorf("replay of a step the workflow never reads: %v", err)
		case awaits && (err == nil || !strings.Contains(err.Error(), "corrupted event log: slot 5")):
			t.Errorf("replay of a step the workflow reads: %v, want a corrupted log at slot 5", err)
		}
	}
}
