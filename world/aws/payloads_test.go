package aws

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

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

// TestLargeInboxPayloadLeavesNoObject: a message with a 1 MB payload
// waits in the run's inbox with its payload in S3. Folded, its payload is
// written again with its event and its own object is deleted; withdrawn,
// likewise. The bucket then holds only the event's object.
func TestLargeInboxPayloadLeavesNoObject(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	mustCreate(t, w, testRun("r"), testEvent(world.RunCreated, ""))
	payload := bigJSON(1 << 20)
	big := func(id string) world.InboxMessage {
		return world.InboxMessage{ID: id, Event: world.Event{Type: world.HookReceived, CorrelationID: "h", Payload: payload, CreatedAt: time.Now()}}
	}
	for _, id := range []string{"folded", "withdrawn"} {
		if err := w.Deliver(ctx, "r", big(id)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(objectKeys(t, w)); n != 2 {
		t.Fatalf("the bucket holds %d objects after two large deliveries, want 2", n)
	}
	if _, err := w.AcquireLease(ctx, "r", world.Lease{Owner: "a", Until: time.Now().Add(time.Minute)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	msgs, err := w.Inbox(ctx, "r")
	if err != nil || len(msgs) != 2 {
		t.Fatalf("Inbox: %d messages, %v", len(msgs), err)
	}
	var folded world.InboxMessage
	for _, m := range msgs {
		if m.ID == "folded" {
			folded = m
		}
	}
	w.ResetCalls()
	if _, err := w.AppendFolded(ctx, "a", "r", 2, []world.Event{folded.Event}, nil, []string{"folded"}); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, w, "folding a 1 MB message", map[string]int64{"S3.PutObject": 1, "DynamoDB.TransactWriteItems": 1, "S3.DeleteObject": 1})
	w.ResetCalls()
	if ok, err := w.Withdraw(ctx, "r", "withdrawn"); err != nil || !ok {
		t.Fatalf("Withdraw: %v, %v", ok, err)
	}
	checkCalls(t, w, "withdrawing a 1 MB message", map[string]int64{"DynamoDB.DeleteItem": 1, "S3.DeleteObject": 1})
	if keys := objectKeys(t, w); len(keys) != 1 {
		t.Errorf("the bucket holds %v, want the folded event's object only", keys)
	}
	evs, err := w.Events(ctx, "r", 1)
	if err != nil || len(evs) != 1 || !bytes.Equal(evs[0].Payload, payload) {
		t.Fatalf("the folded event: %d events, %v", len(evs), err)
	}
}

// objectKeys lists the World's bucket.
func objectKeys(t *testing.T, w *World) []string {
	t.Helper()
	out, err := w.s3.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: &w.opts.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}
