package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

func TestFastPayloadsMatchEncodingJSON(t *testing.T) {
	// Raw values as the root package makes them: with json.Marshal.
	raws := []json.RawMessage{nil, mustJSON(1), mustJSON("a\"b<>&"), mustJSON(map[string]any{"a": []any{1, 2, map[string]any{"b": nil}}, "pad": "xx"})}
	var cases []any
	for _, raw := range raws {
		cases = append(cases, stepCompletedPayload{Output: raw})
		for _, name := range []string{"charge", "", `we"ird\name`, "<html>&", "ünïcode"} {
			cases = append(cases, stepCreatedPayload{Step: name, Input: raw})
		}
	}
	for _, a := range []int{0, 1, 42, -3} {
		cases = append(cases, stepStartedPayload{Attempt: a})
	}
	for _, at := range []time.Time{time.Date(2026, 12, 1, 17, 4, 5, 123456789, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -5*3600))} {
		cases = append(cases, stepStartedPayload{Attempt: 2, Deadline: at})
	}
	for _, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := encodeFast(c)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("encodeFast(%#v) = %s, want %s", c, got, want)
		}
		// Decoding gives back what encoding/json would.
		ptr := reflect.New(reflect.TypeOf(c))
		wantPtr := reflect.New(reflect.TypeOf(c))
		if err := json.Unmarshal(want, wantPtr.Interface()); err != nil {
			t.Fatal(err)
		}
		if decodeFast(want, ptr.Interface()) {
			if !reflect.DeepEqual(normal(ptr.Elem().Interface()), normal(wantPtr.Elem().Interface())) {
				t.Errorf("decodeFast(%s) = %#v, want %#v", want, ptr.Elem().Interface(), wantPtr.Elem().Interface())
			}
		}
		var viaHelper = decodeVia(t, c, want)
		if !reflect.DeepEqual(normal(viaHelper), normal(wantPtr.Elem().Interface())) {
			t.Errorf("decodePayload(%s) = %#v", want, viaHelper)
		}
	}
}

// decodeVia decodes through decodePayload, fast path or not.
func decodeVia(t *testing.T, c any, payload json.RawMessage) any {
	ev := world0(payload)
	var (
		v   any
		err error
	)
	switch c.(type) {
	case stepStartedPayload:
		v, err = decodePayload[stepStartedPayload](ev)
	case stepCompletedPayload:
		v, err = decodePayload[stepCompletedPayload](ev)
	case stepCreatedPayload:
		v, err = decodePayload[stepCreatedPayload](ev)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// normal makes empty and nil raw messages compare equal.
func normal(v any) any {
	switch p := v.(type) {
	case stepCompletedPayload:
		if len(p.Output) == 0 {
			p.Output = nil
		}
		return p
	case stepCreatedPayload:
		if len(p.Input) == 0 {
			p.Input = nil
		}
		return p
	}
	return v
}

func TestDecodeFastLeavesOtherFormsToEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		payload string
		v       any
	}{
		{`{"attempt":"1"}`, &stepStartedPayload{}},
		{`{ "attempt":1}`, &stepStartedPayload{}},
		{`{"result":1}`, &stepCompletedPayload{}},
		{`{ "step":"a"}`, &stepCreatedPayload{}},
		{`{"step":"a\"b","input":1}`, &stepCreatedPayload{}},
		{`{"step":"a","inputs":1}`, &stepCreatedPayload{}},
		{`[]`, &stepCreatedPayload{}},
		{`{"token":"x"}`, &hookCreatedPayload{}},
	} {
		if decodeFast([]byte(c.payload), c.v) {
			t.Errorf("%s decoded fast into %T", c.payload, c.v)
		}
	}
}

func world0(payload json.RawMessage) world.Event {
	return world.Event{Type: world.StepCreated, Payload: payload}
}
