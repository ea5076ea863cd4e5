package aws

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/worldtest"
)

// newDeadLetterWorld is a World whose queue dead-letters a message after
// two receives.
func newDeadLetterWorld(t *testing.T) *World {
	t.Helper()
	cfg := emulatorConfig(t)
	name := "wf-dlq-" + strings.ToLower(rand.Text())
	opts, err := Bootstrap(t.Context(), cfg, Names{Table: name, Queue: name, Bucket: name, DeadLetterAfter: 2})
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	t.Cleanup(func() { teardown(t, cfg, opts) })
	opts.DeadLetterQueueURL = "" // found from the queue's redrive policy, as the CLI finds it
	w, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return w
}

func TestDeadLetters(t *testing.T) {
	worldtest.DeadLetters(t, newDeadLetterWorld(t))
}

// TestRedriveKilledBeforeTheDeleteSendsOnce plays a redrive killed after
// it queued a dead letter again but before it deleted it: the next
// redrive deletes the dead letter and sends nothing.
func TestRedriveKilledBeforeTheDeleteSendsOnce(t *testing.T) {
	w := newDeadLetterWorld(t)
	ctx := t.Context()
	if err := w.Enqueue(ctx, world.Message{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	deadLetterAll(t, w)
	letters, err := w.ListDeadLetters(ctx, 0)
	if err != nil || len(letters) != 1 {
		t.Fatalf("ListDeadLetters: %+v, %v; want one", letters, err)
	}
	if err := w.resendOnce(ctx, letters[0]); err != nil { // ...and killed here
		t.Fatal(err)
	}
	w.ResetCalls()
	moved, err := w.Redrive(ctx, nil)
	if err != nil || moved != 1 {
		t.Fatalf("Redrive: moved %d, %v; want 1", moved, err)
	}
	calls := w.Calls()
	if calls["SQS.SendMessage"] != 0 || calls["SQS.DeleteMessage"] != 1 {
		t.Errorf("the second redrive made %v; want no SendMessage and one DeleteMessage", calls)
	}
	receive, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := w.Receive(receive, 30*time.Second)
	if err != nil || d.RunID != "r" {
		t.Fatalf("Receive: %+v, %v", d, err)
	}
	if d, err := w.Receive(receive, 30*time.Second); err == nil {
		t.Fatalf("a second copy of the redriven message: %+v", d)
	}
}

// TestRedriveCalls counts what a redrive of ten dead letters costs.
func TestRedriveCalls(t *testing.T) {
	w := newDeadLetterWorld(t)
	ctx := t.Context()
	for range 10 {
		if err := w.Enqueue(ctx, world.Message{RunID: "r"}); err != nil {
			t.Fatal(err)
		}
	}
	deadLetterAll(t, w)
	w.ResetCalls()
	moved, err := w.Redrive(ctx, nil)
	if err != nil || moved != 10 {
		t.Fatalf("Redrive: moved %d, %v; want 10", moved, err)
	}
	calls := w.Calls()
	t.Logf("redrive of 10 dead letters: %v", calls)
	for op, want := range map[string]int64{"SQS.SendMessage": 10, "SQS.DeleteMessage": 10, "DynamoDB.PutItem": 10, "DynamoDB.UpdateItem": 10} {
		if calls[op] != want {
			t.Errorf("%s: %d calls, want %d", op, calls[op], want)
		}
	}
	if r := calls["SQS.ReceiveMessage"]; r > 4 {
		t.Errorf("%d receives for 10 dead letters, want at most 4 (10 a receive, and the empty one)", r)
	}
}

// deadLetterAll fails every queued message's deliveries until the queue is
// empty: they are all dead letters then.
func deadLetterAll(t *testing.T, w *World) {
	t.Helper()
	for {
		receive, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		d, err := w.Receive(receive, time.Second)
		cancel()
		if err != nil {
			return
		}
		if err := w.Release(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
}
