package aws

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// bigJSON returns a JSON document of about n bytes.
func bigJSON(n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"blob":%q}`, strings.Repeat("x", n)))
}

// TestLargeEventPayloadGoesToS3 appends a 1 MB event, over DynamoDB's
// 400 KB item limit: its payload goes to S3 and comes back on reading.
func TestLargeEventPayloadGoesToS3(t *testing.T) {
	w := newTestWorld(t)
	mustCreate(t, w, testRun("r"), testEvent(world.RunCreated, ""))
	payload := bigJSON(1 << 20)

	w.ResetCalls()
	mustAppend(t, w, "r", 2, world.Event{Type: world.StepCompleted, Payload: payload})
	checkCalls(t, w, "appending a 1 MB event", map[string]int64{"S3.PutObject": 1, "DynamoDB.TransactWriteItems": 1})

	w.ResetCalls()
	evs, err := w.Events(t.Context(), "r", 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("Events = %d events, %v", len(evs), err)
	}
	if !bytes.Equal(evs[0].Payload, payload) {
		t.Fatalf("payload came back as %d bytes, want the %d written", len(evs[0].Payload), len(payload))
	}
	checkCalls(t, w, "reading a 1 MB event", map[string]int64{"DynamoDB.Query": 1, "S3.GetObject": 1})
}

// TestLargeRunPayloads round-trips a run whose input and output are over
// the item limit, through GetRun and ListRuns.
func TestLargeRunPayloads(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	run := testRun("r")
	run.Input = bigJSON(1 << 20)
	mustCreate(t, w, run, testEvent(world.RunCreated, ""))
	output := bigJSON(600 << 10)
	if _, err := w.AppendEvents(ctx, "r", 2, []world.Event{testEvent(world.RunCompleted, "")},
		&world.RunUpdate{Status: world.StatusCompleted, Output: output}); err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	got, err := w.GetRun(ctx, "r")
	if err != nil || !bytes.Equal(got.Input, run.Input) || !bytes.Equal(got.Output, output) {
		t.Fatalf("GetRun = input %d bytes, output %d bytes, %v; want %d and %d", len(got.Input), len(got.Output), err, len(run.Input), len(output))
	}
	page, err := w.ListRuns(ctx, world.RunFilter{Workflow: "wf"})
	if err != nil || len(page.Runs) != 1 || !bytes.Equal(page.Runs[0].Output, output) {
		t.Fatalf("ListRuns = %d runs, %v; want the run with its output", len(page.Runs), err)
	}
}

// TestBatchOverTransactionLimit appends twelve 300 KB events at once: each
// fits an item, but together they exceed a transaction's 4 MB, so the
// largest go to S3 until the rest fit.
func TestBatchOverTransactionLimit(t *testing.T) {
	w := newTestWorld(t)
	mustCreate(t, w, testRun("r"))
	var batch []world.Event
	for i := range 12 {
		batch = append(batch, world.Event{Type: world.StepCompleted, Payload: bigJSON(300<<10 + i)})
	}
	mustAppend(t, w, "r", 1, batch...)
	evs, err := w.Events(t.Context(), "r", 0)
	if err != nil || len(evs) != len(batch) {
		t.Fatalf("Events = %d events, %v; want %d", len(evs), err, len(batch))
	}
	for i, e := range evs {
		if !bytes.Equal(e.Payload, batch[i].Payload) {
			t.Errorf("event %d's payload came back changed", i)
		}
	}
}

// TestLargeChunk writes a 1 MB stream chunk, read back live and after the
// stream is compacted.
func TestLargeChunk(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	big := bytes.Repeat([]byte("y"), 1<<20)
	if err := w.WriteStream(ctx, "s", [][]byte{[]byte("a"), big, {}}); err != nil {
		t.Fatalf("WriteStream: %v", err)
	}
	check := func(when string, wantClosed bool) {
		t.Helper()
		chunks, closed, err := w.ReadStream(ctx, "s", 1)
		if err != nil || len(chunks) != 2 || !bytes.Equal(chunks[0], big) || chunks[1] == nil || len(chunks[1]) != 0 || closed != wantClosed {
			t.Fatalf("%s: ReadStream = %d chunks, closed %v, %v; want the 1 MB chunk and an empty one", when, len(chunks), closed, err)
		}
	}
	check("live", false)
	if err := w.CloseStream(ctx, "s"); err != nil {
		t.Fatalf("CloseStream: %v", err)
	}
	check("compacted", true)
}
