package aws

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// TestCallCosts measures the AWS calls of each World operation, and keeps
// the table in doc.go honest: change both together.
func TestCallCosts(t *testing.T) {
	w := newTestWorld(t)
	other, err := New(emulatorConfig(t), w.opts) // a second process on the same resources
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	big := bigJSON(1 << 20)
	hook := world.Hook{Token: "tok", RunID: "r", CorrelationID: "h1"}
	ok := func(err error) error { return err }
	is := func(target error) func(error) error {
		return func(err error) error {
			if errors.Is(err, target) {
				return nil
			}
			return err
		}
	}
	msg := func(id string) world.InboxMessage {
		return world.InboxMessage{ID: id, Event: testEvent(world.HookReceived, `{"resumeId":"`+id+`"}`)}
	}
	var d world.Delivery
	var overdue []world.OverdueRun
	receive := func(ctx context.Context) (err error) { d, err = w.Receive(ctx, time.Minute); return err }
	ack := func(ctx context.Context) error { return w.Ack(ctx, d) }
	type calls = map[string]int64
	steps := []struct {
		name  string
		on    *World
		do    func(ctx context.Context) error
		check func(error) error
		want  calls
	}{
		{"CreateRun", w, func(ctx context.Context) error {
			_, err := w.CreateRun(ctx, testRun("r"), []world.Event{testEvent(world.RunCreated, ""), testEvent(world.RunStarted, "")})
			return err
		}, ok, calls{"DynamoDB.TransactWriteItems": 1}},
		{"CreateRun with a 1 MB input", w, func(ctx context.Context) error {
			r := testRun("big")
			r.Input = big
			_, err := w.CreateRun(ctx, r, nil)
			return err
		}, ok, calls{"DynamoDB.TransactWriteItems": 1, "S3.PutObject": 1}},
		{"CreateRun of an existing run", w, func(ctx context.Context) error {
			_, err := w.CreateRun(ctx, testRun("r"), nil)
			return err
		}, is(world.ErrRunExists), calls{"DynamoDB.TransactWriteItems": 1, "DynamoDB.Query": 1}},
		{"GetRun", w, func(ctx context.Context) error { _, err := w.GetRun(ctx, "r"); return err },
			ok, calls{"DynamoDB.Query": 1}},
		{"GetRun with a 1 MB input", w, func(ctx context.Context) error { _, err := w.GetRun(ctx, "big"); return err },
			ok, calls{"DynamoDB.Query": 1, "S3.GetObject": 1}},
		{"ListRuns, one page", w, func(ctx context.Context) error {
			_, err := w.ListRuns(ctx, world.RunFilter{Workflow: "wf", Limit: 1})
			return err
		}, ok, calls{"DynamoDB.Query": listShards, "DynamoDB.BatchGetItem": 1, "S3.GetObject": 1}},
		{"AppendEvents with an update", w, func(ctx context.Context) error {
			_, err := w.AppendEvents(ctx, "r", 3, []world.Event{testEvent(world.StepCreated, "")}, &world.RunUpdate{Status: world.StatusRunning})
			return err
		}, ok, calls{"DynamoDB.TransactWriteItems": 1}},
		{"AppendEvents at a taken slot", w, func(ctx context.Context) error {
			_, err := w.AppendEvents(ctx, "r", 3, []world.Event{testEvent(world.StepCreated, "")}, nil)
			return err
		}, is(world.ErrSlotTaken), calls{"DynamoDB.TransactWriteItems": 1, "DynamoDB.Query": 1}},
		{"Events", w, func(ctx context.Context) error { _, err := w.Events(ctx, "r", 0); return err },
			ok, calls{"DynamoDB.Query": 1}},
		{"ReadRun", w, func(ctx context.Context) error { _, _, _, _, err := w.ReadRun(ctx, "r", 0); return err },
			ok, calls{"DynamoDB.Query": 1}},
		{"AcquireLease", w, func(ctx context.Context) error {
			_, err := w.AcquireLease(ctx, "r", world.Lease{Owner: "a", Until: time.Now().Add(time.Minute)}, time.Now())
			return err
		}, ok, calls{"DynamoDB.UpdateItem": 1}},
		{"AcquireLeaseAt by its holder", w, func(ctx context.Context) error {
			_, last, err := w.AcquireLeaseAt(ctx, "r", world.Lease{Owner: "a", Until: time.Now().Add(time.Minute)}, time.Now())
			if err == nil && last != 3 {
				err = fmt.Errorf("the lease found the log at slot %d, want 3", last)
			}
			return err
		}, ok, calls{"DynamoDB.UpdateItem": 1}},
		{"AcquireLease of a held lease", w, func(ctx context.Context) error {
			_, err := w.AcquireLease(ctx, "r", world.Lease{Owner: "b", Until: time.Now().Add(time.Minute)}, time.Now())
			return err
		}, is(world.ErrLeaseHeld), calls{"DynamoDB.UpdateItem": 1}},
		{"RenewLease", w, func(ctx context.Context) error {
			return w.RenewLease(ctx, "r", world.Lease{Owner: "a", Until: time.Now().Add(time.Minute)})
		}, ok, calls{"DynamoDB.UpdateItem": 1}},
		{"AppendLeased", w, func(ctx context.Context) error {
			_, err := w.AppendLeased(ctx, "a", "r", 4, []world.Event{testEvent(world.StepStarted, "")}, nil)
			return err
		}, ok, calls{"DynamoDB.TransactWriteItems": 1}},
		{"Deliver", w, func(ctx context.Context) error { return w.Deliver(ctx, "r", msg("m1")) },
			ok, calls{"DynamoDB.PutItem": 1}},
		{"Deliver again", w, func(ctx context.Context) error { return w.Deliver(ctx, "r", msg("m1")) },
			ok, calls{"DynamoDB.PutItem": 1}},
		{"Deliver of a 1 MB payload", w, func(ctx context.Context) error {
			m := msg("m2")
			m.Event.Payload = big
			return w.Deliver(ctx, "r", m)
		}, ok, calls{"DynamoDB.PutItem": 1, "S3.PutObject": 1}},
		{"GetRun with messages waiting", w, func(ctx context.Context) error { _, err := w.GetRun(ctx, "r"); return err },
			ok, calls{"DynamoDB.Query": 1}},
		{"Inbox", w, func(ctx context.Context) error { _, err := w.Inbox(ctx, "r"); return err },
			ok, calls{"DynamoDB.Query": 1, "S3.GetObject": 1}},
		{"Withdraw of a message with a 1 MB payload", w, func(ctx context.Context) error { _, err := w.Withdraw(ctx, "r", "m2"); return err },
			ok, calls{"DynamoDB.DeleteItem": 1, "S3.DeleteObject": 1}},
		{"AppendFolded", w, func(ctx context.Context) error {
			_, err := w.AppendFolded(ctx, "a", "r", 5, nil, nil, []string{"m1"})
			return err
		}, ok, calls{"DynamoDB.TransactWriteItems": 1}},
		{"ReleaseLease", w, func(ctx context.Context) error {
			_, err := w.ReleaseLease(ctx, "r", world.Release{Owner: "a", Seen: 4, Suspended: true})
			return err
		},
			ok, calls{"DynamoDB.UpdateItem": 1}},
		{"ClaimHook of a free token", w, func(ctx context.Context) error { _, err := w.ClaimHook(ctx, hook, false); return err },
			ok, calls{"DynamoDB.PutItem": 1}},
		{"ClaimHook by its holder", w, func(ctx context.Context) error { _, err := w.ClaimHook(ctx, hook, false); return err },
			ok, calls{"DynamoDB.PutItem": 1}},
		{"ClaimHook of a held token", w, func(ctx context.Context) error {
			_, err := w.ClaimHook(ctx, world.Hook{Token: "tok", RunID: "x"}, false)
			return err
		}, is(world.ErrHookConflict), calls{"DynamoDB.PutItem": 1}},
		{"forced ClaimHook of a held token", w, func(ctx context.Context) error {
			_, err := w.ClaimHook(ctx, world.Hook{Token: "tok", RunID: "x"}, true)
			return err
		}, ok, calls{"DynamoDB.PutItem": 2}},
		{"GetHook", w, func(ctx context.Context) error { _, err := w.GetHook(ctx, "tok"); return err },
			ok, calls{"DynamoDB.GetItem": 1}},
		{"DisposeHook with retention", w, func(ctx context.Context) error {
			return w.DisposeHook(ctx, "tok", "x", time.Now().Add(time.Hour))
		}, ok, calls{"DynamoDB.UpdateItem": 1}},
		{"DisposeHook", w, func(ctx context.Context) error { return w.DisposeHook(ctx, "tok", "x", time.Time{}) },
			ok, calls{"DynamoDB.DeleteItem": 1}},
		{"Enqueue", w, func(ctx context.Context) error { return w.Enqueue(ctx, world.Message{RunID: "r"}) },
			ok, calls{"SQS.SendMessage": 1}},
		{"Receive of a waiting message", w, receive, ok, calls{"SQS.ReceiveMessage": 1}},
		{"Ack", w, ack, ok, calls{"SQS.DeleteMessage": 1}},
		{"Enqueue with a DedupKey", w, func(ctx context.Context) error {
			return w.Enqueue(ctx, world.Message{RunID: "r", DedupKey: "k"})
		}, ok, calls{"DynamoDB.PutItem": 1, "SQS.SendMessage": 1, "DynamoDB.UpdateItem": 1}},
		{"Enqueue with a DedupKey already waiting", w, func(ctx context.Context) error {
			return w.Enqueue(ctx, world.Message{RunID: "r", DedupKey: "k"})
		}, ok, calls{"DynamoDB.PutItem": 1}},
		{"Receive of a message with a DedupKey", w, receive, ok, calls{"SQS.ReceiveMessage": 1, "DynamoDB.DeleteItem": 1}},
		{"Ack of a message with a DedupKey", w, ack, ok, calls{"SQS.DeleteMessage": 1}},
		{"WriteStream of 6 chunks", w, func(ctx context.Context) error { return writeChunks(ctx, w, 6) },
			ok, calls{"DynamoDB.TransactWriteItems": 1}},
		{"WriteStream again", w, func(ctx context.Context) error { return writeChunks(ctx, w, 6) },
			ok, calls{"DynamoDB.TransactWriteItems": 1}},
		{"WriteStream by another World", other, func(ctx context.Context) error { return writeChunks(ctx, other, 6) },
			ok, calls{"DynamoDB.TransactWriteItems": 2}},
		{"ReadStream of a live stream", w, func(ctx context.Context) error { _, _, err := w.ReadStream(ctx, "s", 0); return err },
			ok, calls{"DynamoDB.Query": 1}},
		{"CloseStream of 18 chunks", w, func(ctx context.Context) error { return w.CloseStream(ctx, "s") },
			ok, calls{"DynamoDB.UpdateItem": 2, "DynamoDB.Query": 1, "S3.PutObject": 1, "DynamoDB.BatchWriteItem": 1}},
		{"ReadStream of a closed stream", w, func(ctx context.Context) error { _, _, err := w.ReadStream(ctx, "s", 0); return err },
			ok, calls{"DynamoDB.Query": 1, "S3.GetObject": 1}},
		{"CloseStream again", w, func(ctx context.Context) error { return w.CloseStream(ctx, "s") },
			ok, calls{"DynamoDB.UpdateItem": 1, "DynamoDB.Query": 1}},
		{"CloseStream of an unwritten stream", w, func(ctx context.Context) error { return w.CloseStream(ctx, "unwritten") },
			ok, calls{"DynamoDB.UpdateItem": 1}},
		{"AppendEvents that finishes the run", w, func(ctx context.Context) error {
			_, err := w.AppendEvents(ctx, "r", 5, []world.Event{testEvent(world.RunCompleted, "")}, &world.RunUpdate{Status: world.StatusCompleted})
			return err
		}, ok, calls{"DynamoDB.TransactWriteItems": 1}},
		{"ExpireRun of 4 events and a stream", w, func(ctx context.Context) error {
			return w.ExpireRun(ctx, "r", []string{world.RunStreamPrefix("r") + "stream-index"})
		}, ok, calls{"DynamoDB.Query": 1, "DynamoDB.BatchWriteItem": 1, "DynamoDB.UpdateItem": 1}},
		{"ExpireRun again", w, func(ctx context.Context) error {
			return w.ExpireRun(ctx, "r", []string{world.RunStreamPrefix("r") + "stream-index"})
		}, ok, calls{"DynamoDB.Query": 1, "DynamoDB.UpdateItem": 1}},
		{"ExpireRun of a run with a payload in S3", w, func(ctx context.Context) error {
			if _, err := w.AppendEvents(ctx, "big", 1, []world.Event{testEvent(world.RunCompleted, "")}, &world.RunUpdate{Status: world.StatusCompleted}); err != nil {
				return err
			}
			w.ResetCalls()
			return w.ExpireRun(ctx, "big", nil)
		}, ok, calls{"DynamoDB.Query": 1, "S3.CopyObject": 1}},
		{"ReleaseLease after the log grew", w, func(ctx context.Context) error {
			if _, err := w.CreateRun(ctx, testRun("g"), []world.Event{testEvent(world.RunCreated, "")}); err != nil {
				return err
			}
			if _, err := w.AcquireLease(ctx, "g", world.Lease{Owner: "a", Until: time.Now().Add(time.Minute)}, time.Now()); err != nil {
				return err
			}
			if _, err := w.AppendEvents(ctx, "g", 2, []world.Event{testEvent(world.HookReceived, "")}, nil); err != nil {
				return err
			}
			w.ResetCalls()
			_, err := w.ReleaseLease(ctx, "g", world.Release{Owner: "a", Seen: 1, Suspended: true})
			return err
		}, ok, calls{"DynamoDB.UpdateItem": 2}},
		{"OverdueRuns, one overdue", w, func(ctx context.Context) (err error) {
			overdue, err = w.OverdueRuns(ctx, time.Now().Add(time.Hour), time.Now(), 100)
			if err == nil && len(overdue) != 1 {
				err = fmt.Errorf("found %+v overdue, want run g", overdue)
			}
			return err
		}, ok, calls{"DynamoDB.Query": dueShards, "DynamoDB.BatchGetItem": 1}},
		{"MarkRequeued", w, func(ctx context.Context) error { return w.MarkRequeued(ctx, overdue[0], time.Now()) },
			ok, calls{"DynamoDB.UpdateItem": 1}},
		{"OverdueRuns, none overdue", w, func(ctx context.Context) error {
			_, err := w.OverdueRuns(ctx, time.Now().Add(-time.Hour), time.Now(), 100)
			return err
		}, ok, calls{"DynamoDB.Query": dueShards}},
		{"StartRun", w, func(ctx context.Context) error {
			_, err := w.StartRun(ctx, testRun("started"), []world.Event{testEvent(world.RunCreated, "")}, world.Message{RunID: "started", DedupKey: "started/start"})
			return err
		}, ok, calls{"DynamoDB.TransactWriteItems": 1, "SQS.SendMessage": 1}},
		{"Receive of a new run's first message", w, receive, ok, calls{"SQS.ReceiveMessage": 1}},
		{"Ack of a new run's first message", w, ack, ok, calls{"SQS.DeleteMessage": 1}},
		{"StartRun of an unfinished run", w, func(ctx context.Context) error {
			_, err := w.StartRun(ctx, testRun("started"), nil, world.Message{RunID: "started", DedupKey: "started/start"})
			return err
		}, is(world.ErrRunExists), calls{"DynamoDB.TransactWriteItems": 1, "DynamoDB.Query": 1, "DynamoDB.PutItem": 1, "SQS.SendMessage": 1, "DynamoDB.UpdateItem": 1}},
		{"StartRun of it again", w, func(ctx context.Context) error {
			_, err := w.StartRun(ctx, testRun("started"), nil, world.Message{RunID: "started", DedupKey: "started/start"})
			return err
		}, is(world.ErrRunExists), calls{"DynamoDB.TransactWriteItems": 1, "DynamoDB.Query": 1, "DynamoDB.PutItem": 1}},
		{"Receive of the repeated start's message", w, receive, ok, calls{"SQS.ReceiveMessage": 1, "DynamoDB.DeleteItem": 1}},
		{"Ack of it", w, ack, ok, calls{"SQS.DeleteMessage": 1}},
	}
	for _, s := range steps {
		s.on.ResetCalls()
		if err := s.check(s.do(t.Context())); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkCalls(t, s.on, s.name, s.want)
	}
}

func writeChunks(ctx context.Context, w *World, n int) error {
	chunks := make([][]byte, n)
	for i := range chunks {
		chunks[i] = []byte("chunk")
	}
	return w.WriteStream(ctx, "s", chunks)
}
