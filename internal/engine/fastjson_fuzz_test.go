package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The hand-written payload encoder must write exactly what encoding/json
// writes, and its decoders must never read a payload differently from
// encoding/json: the log is read by other versions of the code, which may
// take either path.

func FuzzFastEncode(f *testing.F) {
	f.Add(1, "charge", []byte(`{"order":"A-1","cents":4200}`))
	f.Add(0, "", []byte(`"<b>&amp;</b>"`))
	f.Add(-3, `we"ird\name`, []byte("\xff\xfe not json"))
	f.Add(1<<40, "ünïcode\u2028", []byte(` [1, 2.50, {"a" : null}] `))
	f.Fuzz(func(t *testing.T, attempt int, name string, value []byte) {
		// Raw values as the root package makes them, with json.Marshal.
		raws := []json.RawMessage{nil, marshal(t, string(value)), marshal(t, value)}
		if json.Valid(value) {
			raws = append(raws, marshal(t, json.RawMessage(value)))
		}
		payloads := []any{stepStartedPayload{Attempt: attempt}}
		for _, raw := range raws {
			payloads = append(payloads, stepCompletedPayload{Output: raw}, stepCreatedPayload{Step: name, Input: raw})
		}
		for _, p := range payloads {
			want := marshal(t, p)
			got, ok := encodeFast(p)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("encodeFast(%#v) = %s, want %s", p, got, want)
			}
			checkDecodesLikeEncodingJSON(t, p, want)
		}
	})
}

func FuzzFastDecode(f *testing.F) {
	for _, p := range []any{
		stepStartedPayload{Attempt: 2},
		stepCompletedPayload{Output: json.RawMessage(`{"id":"ch_1"}`)},
		stepCompletedPayload{},
		stepCreatedPayload{Step: "charge", Input: json.RawMessage(`[1,2]`)},
		stepCreatedPayload{Step: "a\"b"},
	} {
		b, _ := encodeFast(p)
		f.Add([]byte(b))
	}
	// Forms another version of the code could write.
	f.Add([]byte(`{"attempt":1,"owner":"w-1"}`))
	f.Add([]byte(`{"output":1,"size":1}`))
	f.Add([]byte(`{"step":"a","input":{},"key":"k"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, p := range []any{stepStartedPayload{}, stepCompletedPayload{}, stepCreatedPayload{}} {
			checkDecodesLikeEncodingJSON(t, p, payload)
		}
	})
}

// checkDecodesLikeEncodingJSON decodes payload into a value of like's type
// both ways: whenever the fast path takes it, encoding/json must too, with
// the same result; and decodePayload (fast or not) must agree with
// encoding/json.
func checkDecodesLikeEncodingJSON(t *testing.T, like any, payload []byte) {
	t.Helper()
	typ := reflect.TypeOf(like)
	want := reflect.New(typ)
	wantErr := json.Unmarshal(payload, want.Interface())
	fast := reflect.New(typ)
	if decodeFast(payload, fast.Interface()) {
		if wantErr != nil {
			t.Fatalf("decodeFast took %q as %T, which encoding/json refuses: %v", payload, like, wantErr)
		}
		if !sameValue(fast.Elem().Interface(), want.Elem().Interface()) {
			t.Fatalf("decodeFast(%q) = %#v, encoding/json: %#v", payload, fast.Elem().Interface(), want.Elem().Interface())
		}
	}
	if wantErr != nil {
		return
	}
	if got := decodeVia(t, like, payload); !sameValue(got, want.Elem().Interface()) {
		t.Fatalf("decodePayload(%q) = %#v, encoding/json: %#v", payload, got, want.Elem().Interface())
	}
}

// sameValue compares decoded payloads, their raw values by what they say:
// an empty raw value and none are the same, and so are two spellings of
// one JSON value.
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case stepCompletedPayload:
		b := b.(stepCompletedPayload)
		return sameRaw(a.Output, b.Output)
	case stepCreatedPayload:
		b := b.(stepCreatedPayload)
		return a.Step == b.Step && sameRaw(a.Input, b.Input)
	}
	return reflect.DeepEqual(a, b)
}

func sameRaw(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

func marshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
