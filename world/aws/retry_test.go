package aws

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

func testRun(id string) world.Run {
	at := time.Now().Truncate(time.Millisecond)
	return world.Run{ID: id, Workflow: "wf", Status: world.StatusPending, Input: json.RawMessage(`{"n":1}`), CreatedAt: at, UpdatedAt: at}
}

func testEvent(typ world.EventType, payload string) world.Event {
	e := world.Event{Type: typ, CreatedAt: time.Now().Truncate(time.Millisecond)}
	if payload != "" {
		e.Payload = json.RawMessage(payload)
	}
	return e
}

func mustCreate(t *testing.T, w *World, run world.Run, first ...world.Event) {
	t.Helper()
	if _, err := w.CreateRun(t.Context(), run, first); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
}

func mustAppend(t *testing.T, w *World, runID string, from int64, events ...world.Event) {
	t.Helper()
	if _, err := w.AppendEvents(t.Context(), runID, from, events, nil); err != nil {
		t.Fatalf("AppendEvents(%s, %d): %v", runID, from, err)
	}
}

// checkLog fails the test unless the run's log has exactly the types want.
func checkLog(t *testing.T, w *World, runID string, want ...world.EventType) {
	t.Helper()
	evs, err := w.Events(t.Context(), runID, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	var got []world.EventType
	for i, e := range evs {
		got = append(got, e.Type)
		if e.Slot != int64(i+1) {
			t.Errorf("event %d has slot %d", i, e.Slot)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("log = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("log = %v, want %v", got, want)
		}
	}
}

// checkCalls compares the World's call counts with want, exactly.
func checkCalls(t *testing.T, w *World, what string, want map[string]int64) {
	t.Helper()
	if got := w.Calls(); !maps.Equal(got, want) {
		t.Errorf("%s made calls %v, want %v", what, got, want)
	}
}

// TestRetriesThrottlingAndServerErrors has AWS refuse one or two attempts of
// every kind of call with throttling or a 500: the SDK retries them and the
// World ends up as if nothing had happened.
func TestRetriesThrottlingAndServerErrors(t *testing.T) {
	w, faults := newFaultyWorld(t)
	ctx := t.Context()

	faults.inject("TransactWriteItems", provisioned, serverError)
	mustCreate(t, w, testRun("r"), testEvent(world.RunCreated, ""))
	faults.inject("TransactWriteItems", throttled)
	mustAppend(t, w, "r", 2, testEvent(world.RunStarted, `{"x":1}`))
	faults.inject("Query", serverError)
	checkLog(t, w, "r", world.RunCreated, world.RunStarted)

	hook := world.Hook{Token: "tok", RunID: "r", CorrelationID: "h1", CreatedAt: time.Now().Truncate(time.Millisecond)}
	faults.inject("PutItem", throttled)
	if _, err := w.ClaimHook(ctx, hook, false); err != nil {
		t.Fatalf("ClaimHook: %v", err)
	}
	faults.inject("GetItem", provisioned)
	if got, err := w.GetHook(ctx, "tok"); err != nil || got.RunID != "r" {
		t.Fatalf("GetHook = %+v, %v", got, err)
	}

	faults.inject("SendMessage", serverError)
	if err := w.Enqueue(ctx, world.Message{RunID: "r"}); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	faults.inject("ReceiveMessage", throttled)
	d, err := w.Receive(ctx, time.Minute)
	if err != nil || d.RunID != "r" || d.Attempt != 1 {
		t.Fatalf("Receive = %+v, %v; want run r at attempt 1", d, err)
	}
	faults.inject("DeleteMessage", serverError)
	if err := w.Ack(ctx, d); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	expectNoMessage(t, w)

	if n := faults.pending(); n != 0 {
		t.Errorf("%d injected faults never fired", n)
	}
	calls := w.Calls()
	for op, want := range map[string]int64{
		"DynamoDB.TransactWriteItems": 2 + 3, "DynamoDB.Query": 1 + 1, "DynamoDB.PutItem": 1 + 1,
		"DynamoDB.GetItem": 1 + 1, "SQS.SendMessage": 1 + 1, "SQS.DeleteMessage": 1 + 1,
	} {
		if calls[op] != want {
			t.Errorf("%s attempts = %d, want %d (calls and retries)", op, calls[op], want)
		}
	}
}

// expectNoMessage checks that the queue stays empty for a moment.
func expectNoMessage(t *testing.T, w *World) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	if d, err := w.Receive(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Receive = %+v, %v; want an empty queue", d, err)
	}
}

// TestLostAnswersAreNotDuplicated lets writes through and then loses their
// answers, so the SDK sends them again: transactions replay through their
// ClientRequestToken, conditional puts recognise the World's own item, and
// nothing is written twice or reported as lost.
func TestLostAnswersAreNotDuplicated(t *testing.T) {
	w, faults := newFaultyWorld(t)
	ctx := t.Context()

	faults.inject("TransactWriteItems", lostAnswer)
	mustCreate(t, w, testRun("r"), testEvent(world.RunCreated, ""))
	faults.inject("TransactWriteItems", lostAnswer)
	mustAppend(t, w, "r", 2, testEvent(world.RunStarted, ""))
	checkLog(t, w, "r", world.RunCreated, world.RunStarted)

	hook := world.Hook{Token: "tok", RunID: "r", CorrelationID: "h1", CreatedAt: time.Now().Truncate(time.Millisecond)}
	faults.inject("PutItem", lostAnswer)
	if prev, err := w.ClaimHook(ctx, hook, false); err != nil || prev.Token != "" {
		t.Fatalf("ClaimHook = %+v, %v; want a first claim", prev, err)
	}

	faults.inject("PutItem", lostAnswer) // the DedupKey's marker
	if err := w.Enqueue(ctx, world.Message{RunID: "r", DedupKey: "k"}); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	d, err := w.Receive(ctx, time.Minute)
	if err != nil || d.RunID != "r" {
		t.Fatalf("Receive = %+v, %v; the message must have been sent", d, err)
	}
	faults.inject("DeleteMessage", lostAnswer)
	if err := w.Ack(ctx, d); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	expectNoMessage(t, w)

	faults.inject("TransactWriteItems", lostAnswer)
	if err := w.WriteStream(ctx, "s", [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatalf("WriteStream: %v", err)
	}
	chunks, _, err := w.ReadStream(ctx, "s", 0)
	if err != nil || len(chunks) != 2 {
		t.Fatalf("ReadStream = %q, %v; want the two chunks once", chunks, err)
	}
	if n := faults.pending(); n != 0 {
		t.Errorf("%d injected faults never fired", n)
	}
}

// TestRefusedConditionsAreNotRetried counts the attempts of writes whose
// condition fails: one each, then the World reads what it needs to answer.
func TestRefusedConditionsAreNotRetried(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	mustCreate(t, w, testRun("r"), testEvent(world.RunCreated, ""), testEvent(world.RunStarted, ""))

	w.ResetCalls()
	if _, err := w.AppendEvents(ctx, "r", 2, []world.Event{testEvent(world.StepCreated, "")}, nil); !errors.Is(err, world.ErrSlotTaken) {
		t.Fatalf("AppendEvents at a taken slot: %v", err)
	}
	checkCalls(t, w, "a refused append", map[string]int64{"DynamoDB.TransactWriteItems": 1, "DynamoDB.Query": 1})

	w.ResetCalls()
	if _, err := w.CreateRun(ctx, testRun("r"), nil); !errors.Is(err, world.ErrRunExists) {
		t.Fatalf("CreateRun of an existing run: %v", err)
	}
	checkCalls(t, w, "a refused create", map[string]int64{"DynamoDB.TransactWriteItems": 1, "DynamoDB.Query": 1})

	hook := world.Hook{Token: "tok", RunID: "r", CorrelationID: "h1"}
	if _, err := w.ClaimHook(ctx, hook, false); err != nil {
		t.Fatalf("ClaimHook: %v", err)
	}
	w.ResetCalls()
	other := world.Hook{Token: "tok", RunID: "other", CorrelationID: "h1"}
	if _, err := w.ClaimHook(ctx, other, false); !errors.Is(err, world.ErrHookConflict) {
		t.Fatalf("ClaimHook of a held token: %v", err)
	}
	checkCalls(t, w, "a refused claim", map[string]int64{"DynamoDB.PutItem": 1})

	w.ResetCalls()
	if err := w.DisposeHook(ctx, "tok", "other", time.Time{}); !errors.Is(err, world.ErrHookNotOwner) {
		t.Fatalf("DisposeHook by another run: %v", err)
	}
	checkCalls(t, w, "a refused dispose", map[string]int64{"DynamoDB.DeleteItem": 1})
}

// TestTransactionConflictIsTriedAgain cancels a transaction for a conflict
// with another transaction, which checked no condition: the World sends it
// again.
func TestTransactionConflictIsTriedAgain(t *testing.T) {
	w, faults := newFaultyWorld(t)
	mustCreate(t, w, testRun("r"), testEvent(world.RunCreated, ""))
	w.ResetCalls()
	faults.inject("TransactWriteItems", fault{status: 400, code: "TransactionCanceledException",
		body: `,"CancellationReasons":[{"Code":"None"},{"Code":"TransactionConflict"}]`})
	mustAppend(t, w, "r", 2, testEvent(world.RunStarted, ""))
	checkCalls(t, w, "an append that met a conflict", map[string]int64{"DynamoDB.TransactWriteItems": 2})
	checkLog(t, w, "r", world.RunCreated, world.RunStarted)
}
