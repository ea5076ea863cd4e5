package aws

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/world"
)

// TestLongDelayIsCapped enqueues a message due in an hour: SQS takes at
// most 15 minutes of delay, so it is sent with that and arrives early.
func TestLongDelayIsCapped(t *testing.T) {
	w, recorder := newFaultyWorld(t)
	msg := world.Message{RunID: "r", DeliverAt: time.Now().Add(time.Hour)}
	if err := w.Enqueue(t.Context(), msg); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	sent := recorder.requests("SendMessage")
	if len(sent) != 1 {
		t.Fatalf("%d SendMessage requests, want 1", len(sent))
	}
	var req struct {
		DelaySeconds int
		MessageBody  string
	}
	if err := json.Unmarshal([]byte(sent[0]), &req); err != nil {
		t.Fatalf("decode SendMessage request: %v", err)
	}
	if req.DelaySeconds != 900 {
		t.Errorf("DelaySeconds = %d, want SQS's maximum 900", req.DelaySeconds)
	}
	got, err := DecodeMessage(req.MessageBody)
	if err != nil || got.RunID != msg.RunID || !got.DeliverAt.Equal(msg.DeliverAt) {
		t.Errorf("DecodeMessage(sent body) = %+v, %v; want %+v", got, err, msg)
	}
}

func TestDecodeMessageRefusesForeignBodies(t *testing.T) {
	for _, body := range []string{"", "not json", `{"other":1}`} {
		if msg, err := DecodeMessage(body); err == nil {
			t.Errorf("DecodeMessage(%q) = %+v, want an error", body, msg)
		}
	}
}

// TestDeliveredReleasesDedupKey plays a Lambda handler, which gets messages
// from its event and not from Receive: once it reports a delivery, the
// key no longer drops messages.
func TestDeliveredReleasesDedupKey(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	msg := world.Message{RunID: "r", DedupKey: "k"}
	for range 2 { // the second is dropped
		if err := w.Enqueue(ctx, msg); err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
	}
	if n := w.Calls()["SQS.SendMessage"]; n != 1 {
		t.Fatalf("%d messages sent for one key, want 1", n)
	}
	if err := w.Delivered(ctx, msg); err != nil {
		t.Fatalf("Delivered: %v", err)
	}
	if err := w.Enqueue(ctx, msg); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if n := w.Calls()["SQS.SendMessage"]; n != 2 {
		t.Fatalf("%d messages sent after the delivery, want 2", n)
	}
}

// TestEnqueueCancelledBeforeSend cancels Enqueue's context while its send
// is on the wire, after the DedupKey's marker was written: the marker must
// not drop the retried Enqueue, whose message must arrive.
func TestEnqueueCancelledBeforeSend(t *testing.T) {
	w, faults := newFaultyWorld(t)
	msg := world.Message{RunID: "r", DedupKey: "k"}
	ctx, cancel := context.WithCancel(t.Context())
	faults.inject("SendMessage", fault{status: 500, code: "InternalServerError", then: cancel})
	if err := w.Enqueue(ctx, msg); err == nil {
		t.Fatal("Enqueue whose send failed returned nil")
	}
	if err := w.Enqueue(t.Context(), msg); err != nil {
		t.Fatalf("retried Enqueue: %v", err)
	}
	wait, stop := context.WithTimeout(t.Context(), 5*time.Second)
	defer stop()
	if d, err := w.Receive(wait, time.Minute); err != nil || d.RunID != "r" {
		t.Fatalf("Receive = %+v, %v; the retried Enqueue sent nothing", d, err)
	}
}

// TestFromEnv configures a World from the environment alone, as a Lambda
// function does, against the emulator.
func TestFromEnv(t *testing.T) {
	plain := newTestWorld(t)
	t.Setenv("WORKFLOW_TABLE", "")
	if _, err := FromEnv(t.Context()); err == nil || !strings.Contains(err.Error(), "WORKFLOW_TABLE") {
		t.Fatalf("FromEnv without WORKFLOW_TABLE: err = %v, want one naming it", err)
	}

	none := t.TempDir() + "/none"
	for k, v := range map[string]string{
		"WORKFLOW_TABLE": plain.opts.Table, "WORKFLOW_QUEUE_URL": plain.opts.QueueURL, "WORKFLOW_BUCKET": plain.opts.Bucket,
		"AWS_ENDPOINT_URL": emulator.Endpoint, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none,
	} {
		t.Setenv(k, v)
	}
	w, err := FromEnv(t.Context())
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	// A large input makes the World use S3 as well as DynamoDB.
	run := testRun("r")
	run.Input = bigJSON(200 << 10)
	mustCreate(t, w, run)
	if got, err := plain.GetRun(t.Context(), "r"); err != nil || len(got.Input) != len(run.Input) {
		t.Fatalf("GetRun of the run FromEnv's World created = %d bytes of input, %v", len(got.Input), err)
	}
}
