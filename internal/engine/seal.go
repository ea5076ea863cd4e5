package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// A run created with payload codecs (codec.Chain) stores its user data
// encoded: the fields of its events that hold what workflows and steps
// exchange, its entity's input and output, its streams' chunks. The rest
// of each event (names, tokens, attempts, times) stays as it is, so the
// log can be followed without the run's key. Sealing happens where the
// engine hands events to the World and opening where it takes them back:
// in memory, a run's events are always plain.

// attrCodec is the reserved attribute that records a run's payload scheme
// and its wrapped data key (codec.Chain.Start); a plain run has none.
const attrCodec = "$codec"

// sealedFields lists, by event type, the payload fields that hold user
// data. A sealed event keeps its other fields and carries these encoded,
// together, under sealedKey.
var sealedFields = map[world.EventType][]string{
	world.RunCreated:     {"input"},
	world.StepCreated:    {"input"},
	world.StepCompleted:  {"output"},
	world.StepHeartbeat:  {"details"},
	world.StepRetrying:   {"heartbeat"},
	world.HookReceived:   {"payload"},
	world.ChildCompleted: {"output"},
	world.RunCompleted:   {"output"},
	world.RunContinued:   {"input"},
}

// sealedKey holds an event's encoded fields (the codec's bytes, base64 in
// the JSON), and a run entity's encoded input or output.
const sealedKey = "$sealed"

// openRun returns the codec of the run, nil for a plain run.
func (e *Engine) openRun(ctx context.Context, run world.Run) (*codec.Run, error) {
	return OpenRun(ctx, e.Codec, run)
}

// sealEvents returns evs with their user data encoded for r (evs itself
// if r is nil: a plain run costs nothing).
func sealEvents(r *codec.Run, evs []world.Event) ([]world.Event, error) {
	if r == nil {
		return evs, nil
	}
	out := make([]world.Event, len(evs))
	for i, ev := range evs {
		var err error
		if out[i], err = sealEvent(r, ev); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sealEvent(r *codec.Run, ev world.Event) (world.Event, error) {
	fields := sealedFields[ev.Type]
	if r == nil || len(fields) == 0 || len(ev.Payload) == 0 {
		return ev, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ev.Payload, &m); err != nil {
		return ev, fmt.Errorf("seal %s event: %w", ev.Type, err)
	}
	inner := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		if v, ok := m[f]; ok {
			inner[f] = v
			delete(m, f)
		}
	}
	enc, err := r.Encode(eventKey(ev), mustMarshal(inner))
	if err != nil {
		return ev, err
	}
	m[sealedKey] = mustMarshal(enc)
	ev.Payload = mustMarshal(m)
	return ev, nil
}

// openEvents returns evs with their user data decoded (evs itself if r
// is nil). In a run with codecs, an event that holds user data in the
// clear is refused: someone wrote it past the codec.
func openEvents(r *codec.Run, evs []world.Event) ([]world.Event, error) {
	if r == nil {
		return evs, nil
	}
	out := make([]world.Event, len(evs))
	for i, ev := range evs {
		var err error
		if out[i], err = openEvent(r, ev); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func openEvent(r *codec.Run, ev world.Event) (world.Event, error) {
	fields := sealedFields[ev.Type]
	if r == nil || len(fields) == 0 || len(ev.Payload) == 0 {
		return ev, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ev.Payload, &m); err != nil {
		return ev, fmt.Errorf("corrupted event log: slot %d (%s): %w", ev.Slot, ev.Type, err)
	}
	for _, f := range fields {
		if _, clear := m[f]; clear {
			return ev, fmt.Errorf("event log: slot %d (%s) holds its %s unencoded in a run with payload codecs: %w", ev.Slot, ev.Type, f, codec.ErrTampered)
		}
	}
	var enc []byte
	if err := json.Unmarshal(m[sealedKey], &enc); err != nil || enc == nil {
		return ev, fmt.Errorf("event log: slot %d (%s) has no encoded payload in a run with payload codecs: %w", ev.Slot, ev.Type, codec.ErrTampered)
	}
	delete(m, sealedKey)
	plain, err := r.Decode(eventKey(ev), enc)
	if err != nil {
		return ev, fmt.Errorf("event log: slot %d: %w", ev.Slot, err)
	}
	if err := json.Unmarshal(plain, &m); err != nil {
		return ev, fmt.Errorf("event log: slot %d (%s): decoded payload: %w", ev.Slot, ev.Type, err)
	}
	ev.Payload = mustMarshal(m)
	return ev, nil
}

// StreamPlace is where a chunk of the named stream belongs, for its codec.
// Not its index: a writer appends without knowing it.
func StreamPlace(name string) string { return "stream/" + name }

// OpenRun returns the codec of a run c can read (nil for a plain run),
// or why it cannot.
func OpenRun(ctx context.Context, c *codec.Chain, run world.Run) (*codec.Run, error) {
	return c.Open(ctx, run.ID, run.Attributes[attrCodec])
}

// ReplyPlace is where a part of the reply to resume resumeID belongs,
// for its codec: its head, or one of its items (the frame that carries
// it names the attempt, and the stream its order).
func ReplyPlace(resumeID string, item bool) string {
	if item {
		return "reply/" + resumeID + "/item"
	}
	return "reply/" + resumeID + "/head"
}

// IsSealedValue reports whether raw has the shape SealValue gives a
// value: a reader without codecs asks for the run's only then.
func IsSealedValue(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`{"`+sealedKey+`"`)) && json.Unmarshal(raw, &v) == nil && len(v) == 1
}

// The places of a run entity's encoded fields.
const (
	placeRunInput  = "run.input"
	placeRunOutput = "run.output"
)

// SealValue encodes a value for r at place: a run entity's input or
// output, a part of a reply (ReplyPlace). r nil returns raw as it is.
func SealValue(r *codec.Run, place string, raw json.RawMessage) (json.RawMessage, error) {
	if r == nil || raw == nil {
		return raw, nil
	}
	enc, err := r.Encode(place, raw)
	if err != nil {
		return nil, err
	}
	return mustMarshal(map[string][]byte{sealedKey: enc}), nil
}

// OpenValue decodes a value SealValue encoded; r nil returns raw as it
// is. In a run with codecs a value in the clear is refused.
func OpenValue(r *codec.Run, place string, raw json.RawMessage) (json.RawMessage, error) {
	if r == nil || raw == nil {
		return raw, nil
	}
	var v map[string][]byte
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &v) != nil || v[sealedKey] == nil || len(v) != 1 {
		return nil, fmt.Errorf("%s is in the clear in a run with payload codecs: %w", place, codec.ErrTampered)
	}
	return r.Decode(place, v[sealedKey])
}

// OpenOutput decodes a finished run's output (Run.Output) with the chain.
func OpenOutput(ctx context.Context, c *codec.Chain, run world.Run) (json.RawMessage, error) {
	if run.Attributes[attrCodec] == "" || run.Status != world.StatusCompleted {
		return run.Output, nil
	}
	r, err := c.Open(ctx, run.ID, run.Attributes[attrCodec])
	if err != nil {
		return nil, err
	}
	return OpenValue(r, placeRunOutput, run.Output)
}

// sealUpdate encodes the output of a run's completion.
func sealUpdate(r *codec.Run, u *world.RunUpdate) (*world.RunUpdate, error) {
	if r == nil || u == nil || u.Status != world.StatusCompleted || u.Output == nil {
		return u, nil
	}
	sealed := *u
	var err error
	sealed.Output, err = SealValue(r, placeRunOutput, u.Output)
	return &sealed, err
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("engine: encoding %T: %v", v, err)) // maps of raw JSON and bytes always encode
	}
	return b
}

// readEvents reads the run's events at slots > after, opened.
func (inv *invocation) readEvents(after int64) ([]world.Event, error) {
	return inv.opened(inv.e.World.Events(inv.ctx, inv.run.ID, after))
}

// opened opens events a World call returned, keeping its error.
func (inv *invocation) opened(evs []world.Event, err error) ([]world.Event, error) {
	if inv.seal == nil || len(evs) == 0 {
		return evs, err
	}
	plain, oerr := openEvents(inv.seal, evs)
	if oerr != nil {
		return nil, oerr
	}
	return plain, err
}

// sealFor seals an event an outside writer appends to run (a hook
// resume, a child's result): with the run's codec, which c opens.
func sealFor(ctx context.Context, c *codec.Chain, run world.Run, ev world.Event) (world.Event, error) {
	attr := run.Attributes[attrCodec]
	if attr == "" {
		return ev, nil
	}
	r, err := c.Open(ctx, run.ID, attr)
	if err != nil {
		return ev, err
	}
	return sealEvent(r, ev)
}

// resealFor moves an event sealed for this run (an inbox message) to
// another run's correlation: opened here, sealed there, since a payload
// is bound to its run and place.
func (inv *invocation) resealFor(runID string, ev world.Event, correlationID string) (world.Event, error) {
	ev, err := openEvent(inv.seal, ev)
	if err != nil {
		return ev, err
	}
	ev.CorrelationID = correlationID
	target, err := inv.e.World.GetRun(inv.ctx, runID)
	if err != nil {
		return ev, err
	}
	return sealFor(inv.ctx, inv.e.Codec, target, ev)
}

// sealNewRun gives a new run the chain's scheme: the $codec attribute, and
// its input sealed in the entity and in run_created.
func sealNewRun(ctx context.Context, c *codec.Chain, run world.Run, first world.Event) (world.Run, world.Event, error) {
	attr, r, err := c.Start(ctx, run.ID)
	if err != nil || r == nil {
		return run, first, err
	}
	attrs := make(map[string]string, len(run.Attributes)+1)
	for k, v := range run.Attributes {
		attrs[k] = v
	}
	attrs[attrCodec] = attr
	run.Attributes = attrs
	if run.Input, err = SealValue(r, placeRunInput, run.Input); err != nil {
		return run, first, err
	}
	first, err = sealEvent(r, first)
	return run, first, err
}

// ForReading returns a run and its events as a reader shows them (the
// CLI, the viewer): decoded if c opens the run; otherwise with every
// encoded value in place of a note saying so, and the reason (a
// *codec.NoKeyError, or a payload that fails to decode).
func ForReading(ctx context.Context, c *codec.Chain, run world.Run, events []world.Event) (world.Run, []world.Event, error) {
	if run.Attributes[attrCodec] == "" {
		return run, events, nil
	}
	r, err := OpenRun(ctx, c, run)
	if err == nil {
		var opened []world.Event
		if opened, err = openEvents(r, events); err == nil {
			plain := run
			if plain.Input, err = OpenValue(r, placeRunInput, run.Input); err == nil {
				if plain.Output, err = OpenOutput(ctx, c, run); err == nil {
					return plain, opened, nil
				}
			}
		}
	}
	return maskSealed(run), maskEvents(events), err
}

// sealedNote stands in for an encoded value a reader cannot decode.
var sealedNote = json.RawMessage(`"(encrypted)"`)

func maskSealed(run world.Run) world.Run {
	if run.Input != nil {
		run.Input = sealedNote
	}
	if run.Output != nil && run.Status == world.StatusCompleted {
		run.Output = sealedNote
	}
	return run
}

func maskEvents(events []world.Event) []world.Event {
	out := make([]world.Event, len(events))
	for i, ev := range events {
		out[i] = ev
		var m map[string]json.RawMessage
		if len(sealedFields[ev.Type]) == 0 || json.Unmarshal(ev.Payload, &m) != nil || m[sealedKey] == nil {
			continue
		}
		m[sealedKey] = sealedNote
		out[i].Payload = mustMarshal(m)
	}
	return out
}
