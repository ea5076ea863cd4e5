package engine

import (
	"bytes"
	"encoding/json"

	"github.com/lambdaworkflow/workflow/world"
)

// Replay decodes only what the workflow needs from a recorded step: its
// name, to check the call, from step_created (the input is the one the
// workflow passes again, never the recorded one), and its output from
// step_completed only when the workflow reads it (Await). A long history
// of steps whose results the workflow no longer looks at costs no pass
// over their payloads.

// resolveRecorded resolves a step with its step_completed event, whose
// payload is decoded when the workflow reads it.
func (o *Op) resolveRecorded(ev world.Event) {
	if o.done {
		return // a duplicate result from a redelivered write; the first wins
	}
	o.done, o.recorded = true, &ev
}

// decodeRecorded decodes the output of a recorded step_completed, once.
func (o *Op) decodeRecorded() error {
	if o.recorded == nil {
		return nil
	}
	p, err := decodePayload[stepCompletedPayload](*o.recorded)
	o.recorded, o.output = nil, p.Output
	return err
}

// recordedStepName is the step name of a step_created payload, without a
// look at the input after it; an escaped name, or a payload of another
// form, is left to encoding/json.
func recordedStepName(ev world.Event) (string, error) {
	if rest, ok := bytes.CutPrefix(ev.Payload, []byte(`{"step":"`)); ok {
		if end := bytes.IndexByte(rest, '"'); end >= 0 && plainString(rest[:end]) {
			return string(rest[:end]), nil
		}
	}
	var p struct {
		Step string `json:"step"`
	}
	err := json.Unmarshal(ev.Payload, &p)
	if err != nil {
		_, err = decodePayload[stepCreatedPayload](ev) // the error names the slot
	}
	return p.Step, err
}
