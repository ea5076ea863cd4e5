package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

func sealedRun(t *testing.T) *codec.Run {
	t.Helper()
	kr, err := codec.NewKeyring("k", map[string][]byte{"k": bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := codec.New(codec.Options{Keys: kr}).Start(context.Background(), "run1")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A run without codecs pays nothing for them: no copy, no allocation.
func TestPlainRunSealsForFree(t *testing.T) {
	evs := []world.Event{{Type: world.StepCompleted, CorrelationID: "1", Payload: mustJSON(stepCompletedPayload{Output: json.RawMessage(`"x"`)})}}
	update := &world.RunUpdate{Status: world.StatusCompleted, Output: json.RawMessage(`"x"`)}
	inv := &invocation{}
	allocs := testing.AllocsPerRun(100, func() {
		sealed, _ := sealEvents(nil, evs)
		_, _ = sealUpdate(nil, update)
		_, _ = inv.opened(sealed, nil)
		_, _ = OpenValue(nil, placeRunOutput, update.Output)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per append of a plain run", allocs)
	}
}

func TestSealedEventKeepsItsShape(t *testing.T) {
	r := sealedRun(t)
	ev := world.Event{Type: world.StepCreated, CorrelationID: "3", Slot: 4,
		Payload: mustJSON(stepCreatedPayload{Step: "charge", Input: json.RawMessage(`{"card":"4242"}`)})}
	sealed, err := sealEvent(r, ev)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed.Payload, []byte("4242")) || !bytes.Contains(sealed.Payload, []byte(`"step":"charge"`)) {
		t.Fatalf("sealed payload %s: want the input hidden, the step name kept", sealed.Payload)
	}
	opened, err := openEvent(r, sealed)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodePayload[stepCreatedPayload](opened)
	if err != nil || p.Step != "charge" || string(p.Input) != `{"card":"4242"}` {
		t.Fatalf("opened %+v, %v", p, err)
	}
	// The same sealed fields under another op fail.
	moved := sealed
	moved.CorrelationID = "5"
	if _, err := openEvent(r, moved); !errors.Is(err, codec.ErrTampered) {
		t.Fatalf("moved to op 5: %v", err)
	}
	// User data written in the clear into a sealed run is refused.
	if _, err := openEvent(r, ev); !errors.Is(err, codec.ErrTampered) {
		t.Fatalf("a clear input in a sealed run: %v", err)
	}
}
