package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// The payloads of the event types, as stored in world.Event.Payload.

type runCreatedPayload struct {
	Workflow   string            `json:"workflow"`
	Input      json.RawMessage   `json:"input,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// Parent is set on child runs: where to report the result.
	Parent *parentRef `json:"parent,omitempty"`
	// Trace is the W3C traceparent of the span that started the run, if
	// traced: every invocation of the run is a span under it.
	Trace string `json:"trace,omitempty"`
	// Limit is set on runs of a workflow with limits: the partition whose
	// slot the run holds until it ends.
	Limit *limitRef `json:"limit,omitempty"`
}

type parentRef struct {
	RunID         string `json:"runId"`
	CorrelationID string `json:"correlationId"`
}

type stepCreatedPayload struct {
	Step  string          `json:"step"`
	Input json.RawMessage `json:"input,omitempty"`
}

type stepStartedPayload struct {
	Attempt int `json:"attempt"`
	// Deadline is when the attempt had to be over by: its invocation's
	// time budget or its declared timeout, whichever came first. An
	// attempt found unfinished after it was stopped by its deadline
	// (see interruptedError).
	Deadline time.Time `json:"deadline,omitzero"`
}

// stepHeartbeatPayload records a running attempt's progress (Heartbeat).
type stepHeartbeatPayload struct {
	Attempt int             `json:"attempt"`
	Details json.RawMessage `json:"details,omitempty"`
}

type stepCompletedPayload struct {
	Output json.RawMessage `json:"output,omitempty"`
}

type stepFailedPayload struct {
	Attempt int             `json:"attempt"`
	Error   json.RawMessage `json:"error"`
	// RetryAt is set on step_retrying: when the next attempt may start.
	RetryAt time.Time `json:"retryAt,omitzero"`
	// Heartbeat is the failed attempt's last heartbeat details, for the
	// next attempt to resume from (none if it sent none).
	Heartbeat json.RawMessage `json:"heartbeat,omitempty"`
}

type waitCreatedPayload struct {
	ResumeAt time.Time `json:"resumeAt"`
}

type hookCreatedPayload struct {
	Token    string          `json:"token"`
	Kind     string          `json:"kind,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Retention keeps the token blocked this long after the hook's creation,
	// even once the run has ended.
	Retention time.Duration `json:"retention,omitempty"`
	// Replies: the hook's resumers wait for a reply to each message.
	Replies bool `json:"replies,omitempty"`
}

type hookReceivedPayload struct {
	// ResumeID identifies one resume call; a reply channel hangs off it.
	ResumeID string          `json:"resumeId"`
	Payload  json.RawMessage `json:"payload,omitempty"`
}

// hookConflictPayload records that the token is held by another run, or
// (ForceClaimed) that another run took it over from this one.
type hookConflictPayload struct {
	Token        string `json:"token"`
	OwnerRunID   string `json:"ownerRunId"`
	ForceClaimed bool   `json:"forceClaimed,omitempty"`
}

type childCreatedPayload struct {
	Workflow   string `json:"workflow"`
	ChildRunID string `json:"childRunId"`
}

type childCompletedPayload struct {
	ChildRunID string          `json:"childRunId"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
}

type attributesPayload struct {
	Attributes map[string]string `json:"attributes"`
}

type runFinishedPayload struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

func mustJSON(v any) json.RawMessage {
	if b, ok := encodeFast(v); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Payload structs hold only JSON-safe fields; failing here is a bug.
		panic(fmt.Sprintf("engine: encoding %T: %v", v, err))
	}
	return b
}

func decodePayload[T any](ev world.Event) (T, error) {
	var v T
	if len(ev.Payload) == 0 || decodeFast(ev.Payload, &v) {
		return v, nil
	}
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		return v, fmt.Errorf("corrupted event log: slot %d (%s): %w", ev.Slot, ev.Type, err)
	}
	return v, nil
}
