package aws

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// A message's trace context travels in its SQS body, which Receive and
// the Lambda handler both decode (DecodeMessage): the invocation it wakes
// links to the span that queued it.
func TestMessagesCarryTheirTrace(t *testing.T) {
	w := newTestWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if err := w.Enqueue(ctx, world.Message{RunID: "traced", Trace: parent}); err != nil {
		t.Fatal(err)
	}
	d, err := w.Receive(ctx, 30*time.Second)
	if err != nil || d.RunID != "traced" || d.Trace != parent {
		t.Fatalf("Receive: %+v, %v; want run traced's message with trace %s", d.Message, err, parent)
	}
	if err := w.Ack(ctx, d); err != nil {
		t.Fatal(err)
	}
}
