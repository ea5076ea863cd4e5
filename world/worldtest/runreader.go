package worldtest

import (
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var runReaderTests = []test{
	{"ReadRunIsGetRunAndEvents", testReadRun},
	{"AcquireLeaseAtTellsTheLastSlot", testAcquireLeaseAt},
}

func testReadRun(t *testing.T, w world.World) {
	r := optional[world.RunReader](t, w)
	ctx := testContext(t)
	first := []world.Event{ev(world.RunCreated, "", `{"input":1}`), ev(world.RunStarted, "", "")}
	run := createRun(t, w, newRun(unique("wf")), first...)
	mustAppend(t, w, run.ID, 3, &world.RunUpdate{Status: world.StatusRunning}, ev(world.StepCreated, "1", ""))
	var waiting []world.InboxMessage
	if ib, ok := w.(world.Inbox); ok {
		msg := world.InboxMessage{ID: unique("msg"), Event: ev(world.HookReceived, "h", `{"m":1}`)}
		if err := ib.Deliver(ctx, run.ID, msg); err != nil {
			t.Fatal(err)
		}
		var err error
		if waiting, err = ib.Inbox(ctx, run.ID); err != nil || len(waiting) != 1 {
			t.Fatalf("Inbox after one delivery: %d messages, %v", len(waiting), err)
		}
	}
	want, err := w.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for after := range int64(4) {
		got, events, inbox, complete, err := r.ReadRun(ctx, run.ID, after)
		if err != nil || !complete {
			t.Fatalf("ReadRun after %d: complete %v, %v; want a short log read whole", after, complete, err)
		}
		if len(inbox) != len(waiting) || (len(inbox) == 1 && (inbox[0].ID != waiting[0].ID || string(inbox[0].Event.Payload) != string(waiting[0].Event.Payload))) {
			t.Fatalf("ReadRun's inbox %+v, want what Inbox reads: %+v", inbox, waiting)
		}
		checkRun(t, "ReadRun", got, want)
		if got.LastSlot != 3 || got.Inbox != want.Inbox {
			t.Fatalf("ReadRun: LastSlot %d, Inbox %d; GetRun says %d, %d", got.LastSlot, got.Inbox, want.LastSlot, want.Inbox)
		}
		checkEvents(t, events, run.ID, after+1, mustEvents(t, w, run.ID, after))
	}
	if _, _, _, _, err := r.ReadRun(ctx, unique("missing"), 0); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("ReadRun of a missing run: %v, want ErrRunNotFound", err)
	}
}

func testAcquireLeaseAt(t *testing.T, w world.World) {
	r := optional[world.RunReader](t, w)
	ctx := testContext(t)
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	at := now()
	a := world.Lease{Owner: unique("a"), Until: at.Add(time.Minute)}
	if _, last, err := r.AcquireLeaseAt(ctx, run.ID, a, at); err != nil || last != 1 {
		t.Fatalf("AcquireLeaseAt of a free lease: last slot %d, %v; want 1", last, err)
	}
	mustAppend(t, w, run.ID, 2, nil, ev(world.StepCreated, "1", ""))
	if _, last, err := r.AcquireLeaseAt(ctx, run.ID, a, at); err != nil || last != 2 {
		t.Fatalf("AcquireLeaseAt by its holder: last slot %d, %v; want 2", last, err)
	}
	held, _, err := r.AcquireLeaseAt(ctx, run.ID, world.Lease{Owner: unique("b"), Until: at.Add(time.Minute)}, at)
	if !errors.Is(err, world.ErrLeaseHeld) || held.Owner != a.Owner {
		t.Fatalf("AcquireLeaseAt of a held lease: %+v, %v; want ErrLeaseHeld and %s", held, err, a.Owner)
	}
	if _, _, err := r.AcquireLeaseAt(ctx, unique("missing"), a, at); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("AcquireLeaseAt of a missing run: %v, want ErrRunNotFound", err)
	}
}
