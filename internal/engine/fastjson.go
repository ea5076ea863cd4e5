package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The payloads of the events every step writes (step_created, step_started,
// step_completed) are encoded and decoded by hand. encoding/json validates
// and compacts a json.RawMessage each time it marshals one, and validates
// and copies it each time it unmarshals one; for a step's input and output
// that is four passes over each, per step, for nothing: the raw values come
// from json.Marshal (the root package encodes every step input and output),
// so they are valid and compact already, and the log gives back what was
// written. The fast paths produce exactly what encoding/json would, and
// the decoders accept only that form, leaving anything else to
// encoding/json. They still check the raw value they cut out of the
// payload (one scan, no copy): a log written by another version of the
// code may hold a field after it, which must not end up inside it.

// encodeFast encodes v if it is one of the hand-encoded payloads.
func encodeFast(v any) (json.RawMessage, bool) {
	switch p := v.(type) {
	case stepStartedPayload:
		b := append([]byte(`{"attempt":`), strconv.Itoa(p.Attempt)...)
		if !p.Deadline.IsZero() {
			// As time.Time's MarshalJSON writes it. Replay decodes this
			// form with encoding/json: it reads a deadline only to say
			// why an attempt never reported.
			b = append(b, `,"deadline":"`...)
			b = p.Deadline.AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
		}
		return append(b, '}'), true
	case stepCompletedPayload:
		if len(p.Output) == 0 {
			return json.RawMessage(`{}`), true
		}
		b := make([]byte, 0, len(`{"output":}`)+len(p.Output))
		b = append(b, `{"output":`...)
		b = append(b, p.Output...)
		return append(b, '}'), true
	case stepCreatedPayload:
		name, err := json.Marshal(p.Step)
		if err != nil {
			return nil, false
		}
		b := make([]byte, 0, len(`{"step":,"input":}`)+len(name)+len(p.Input))
		b = append(b, `{"step":`...)
		b = append(b, name...)
		if len(p.Input) > 0 {
			b = append(b, `,"input":`...)
			b = append(b, p.Input...)
		}
		return append(b, '}'), true
	}
	return nil, false
}

// decodeFast decodes payload into v if v is one of the hand-encoded
// payloads and payload has the form encodeFast writes. The raw values it
// returns share payload's memory.
func decodeFast(payload []byte, v any) bool {
	n := len(payload)
	if n < 2 || payload[0] != '{' || payload[n-1] != '}' {
		return false
	}
	switch p := v.(type) {
	case *stepStartedPayload:
		rest, ok := bytes.CutPrefix(payload[:n-1], []byte(`{"attempt":`))
		if !ok {
			return false
		}
		a, err := strconv.Atoi(string(rest))
		p.Attempt = a
		// Only the form Itoa writes: "+1" and "01" are not JSON numbers.
		return err == nil && strconv.Itoa(a) == string(rest)
	case *stepCompletedPayload:
		if n == 2 {
			return true
		}
		rest, ok := bytes.CutPrefix(payload[:n-1], []byte(`{"output":`))
		if !ok || !json.Valid(rest) {
			return false
		}
		p.Output = rest
		return true
	case *stepCreatedPayload:
		rest, ok := bytes.CutPrefix(payload[:n-1], []byte(`{"step":"`))
		if !ok {
			return false
		}
		end := bytes.IndexByte(rest, '"')
		if end < 0 || !plainString(rest[:end]) {
			return false // an escaped name: leave it to encoding/json
		}
		name := string(rest[:end])
		rest = rest[end+1:]
		if len(rest) == 0 {
			p.Step = name
			return true
		}
		input, ok := bytes.CutPrefix(rest, []byte(`,"input":`))
		if !ok || !json.Valid(input) {
			return false
		}
		p.Step, p.Input = name, input
		return true
	}
	return false
}

// plainString reports whether s, the inside of a JSON string, means
// itself: no escapes, no control characters, valid UTF-8 (encoding/json
// reads invalid bytes as U+FFFD).
func plainString(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return false
		}
	}
	return utf8.Valid(s)
}

// Tripwires: adding a field to a hand-encoded payload breaks the build
// here, so that encodeFast and decodeFast learn about it.
var (
	_ = stepStartedPayload(struct {
		Attempt  int
		Deadline time.Time
	}{})
	_ = stepCompletedPayload(struct{ Output json.RawMessage }{})
	_ = stepCreatedPayload(struct {
		Step  string
		Input json.RawMessage
	}{})
)
