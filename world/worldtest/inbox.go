package worldtest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var inboxTests = []test{
	{"ConcurrentDeliveries", testInboxConcurrentDeliveries},
	{"OrderIsStable", testInboxOrder},
	{"RedeliveryIsOneMessage", testInboxRedelivery},
	{"Withdraw", testInboxWithdraw},
	{"FoldMovesMessagesToTheLog", testInboxFold},
	{"FoldOfAWithdrawnMessage", testInboxFoldWithdrawn},
	{"FoldIsFenced", testInboxFoldFenced},
	{"FoldLosesASlot", testInboxFoldLosesSlot},
	{"DeliveryAcrossARelease", testInboxAcrossRelease},
}

// inboxRun returns the World's optional Inbox and a run holding its lease,
// or skips.
func inboxRun(t *testing.T, w world.World) (world.Inbox, world.Run, world.Lease) {
	ib := optional[world.Inbox](t, w)
	run, a, _ := heldRun(t, w, time.Minute)
	return ib, run, a
}

// message is a hook message as a resumer delivers it.
func message(id, corr string, at time.Time) world.InboxMessage {
	e := ev(world.HookReceived, corr, fmt.Sprintf(`{"resumeId":%q}`, id))
	e.CreatedAt = at
	return world.InboxMessage{ID: id, Event: e}
}

func mustDeliver(t *testing.T, ib world.Inbox, runID string, msgs ...world.InboxMessage) {
	t.Helper()
	for _, m := range msgs {
		if err := ib.Deliver(testContext(t), runID, m); err != nil {
			t.Fatalf("Deliver(%s, %s): %v", runID, m.ID, err)
		}
	}
}

func mustInbox(t *testing.T, ib world.Inbox, runID string) []world.InboxMessage {
	t.Helper()
	msgs, err := ib.Inbox(testContext(t), runID)
	if err != nil {
		t.Fatalf("Inbox(%s): %v", runID, err)
	}
	return msgs
}

func inboxIDs(msgs []world.InboxMessage) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return ids
}

// checkInbox checks the inbox holds exactly ids, in order, and that
// GetRun counts them.
func checkInbox(t *testing.T, w world.World, ib world.Inbox, runID string, ids ...string) []world.InboxMessage {
	t.Helper()
	msgs := mustInbox(t, ib, runID)
	if got := inboxIDs(msgs); !slices.Equal(got, ids) {
		t.Fatalf("Inbox(%s) = %v, want %v", runID, got, ids)
	}
	run, err := w.GetRun(testContext(t), runID)
	if err != nil || run.Inbox != len(ids) {
		t.Fatalf("GetRun(%s).Inbox = %d, %v; want %d", runID, run.Inbox, err, len(ids))
	}
	return msgs
}

// Many resumers deliver at once: none contends with another, every
// message is there, and GetRun counts them without the log changing.
func testInboxConcurrentDeliveries(t *testing.T, w world.World) {
	ib, run, _ := inboxRun(t, w)
	const n = 50
	at := now()
	errs := make([]error, n)
	race(n, func(i int) { errs[i] = ib.Deliver(testContext(t), run.ID, message(fmt.Sprintf("m%02d", i), "1", at)) })
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Deliver: %v", err)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("m%02d", i))
	}
	checkInbox(t, w, ib, run.ID, want...)
	checkLastSlot(t, w, run, 1)
}

// The inbox lists messages by delivery time, then ID, the same on every
// read: the order a fold appends them in, whoever folds.
func testInboxOrder(t *testing.T, w world.World) {
	ib, run, _ := inboxRun(t, w)
	at := now()
	mustDeliver(t, ib, run.ID, message("c", "1", at), message("a", "1", at.Add(time.Millisecond)), message("b", "1", at))
	msgs := checkInbox(t, w, ib, run.ID, "b", "c", "a")
	want := message("b", "1", at).Event
	if got := msgs[0].Event; got.Type != want.Type || got.CorrelationID != want.CorrelationID ||
		!jsonEqual(got.Payload, want.Payload) || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("Inbox()[0].Event = %+v, want %+v", got, want)
	}
}

// A resumer that retries delivers the same ID again: it stays one message,
// the first.
func testInboxRedelivery(t *testing.T, w world.World) {
	ib, run, _ := inboxRun(t, w)
	at := now()
	mustDeliver(t, ib, run.ID, message("m", "1", at), message("m", "2", at.Add(time.Second)))
	if msgs := checkInbox(t, w, ib, run.ID, "m"); msgs[0].Event.CorrelationID != "1" {
		t.Fatalf("after a redelivery the message is %+v, want the first delivery's", msgs[0].Event)
	}
}

// Withdraw takes a message back once; then it is gone.
func testInboxWithdraw(t *testing.T, w world.World) {
	ib, run, _ := inboxRun(t, w)
	ctx := testContext(t)
	at := now()
	mustDeliver(t, ib, run.ID, message("a", "1", at), message("b", "1", at))
	if ok, err := ib.Withdraw(ctx, run.ID, "a"); err != nil || !ok {
		t.Fatalf("Withdraw of a waiting message = %v, %v; want true", ok, err)
	}
	if ok, err := ib.Withdraw(ctx, run.ID, "a"); err != nil || ok {
		t.Fatalf("Withdraw of a withdrawn message = %v, %v; want false", ok, err)
	}
	if ok, err := ib.Withdraw(ctx, run.ID, "never"); err != nil || ok {
		t.Fatalf("Withdraw of a message never delivered = %v, %v; want false", ok, err)
	}
	checkInbox(t, w, ib, run.ID, "b")
}

// AppendFolded appends the events and takes the folded messages out of the
// inbox, in one step; a message withdrawn after the fold is not there.
func testInboxFold(t *testing.T, w world.World) {
	ib, run, a := inboxRun(t, w)
	ctx := testContext(t)
	at := now()
	mustDeliver(t, ib, run.ID, message("a", "1", at), message("b", "1", at), message("c", "1", at.Add(time.Second)))
	msgs := mustInbox(t, ib, run.ID)[:2]
	events := []world.Event{msgs[0].Event, msgs[1].Event}
	if _, err := ib.AppendFolded(ctx, a.Owner, run.ID, 2, events, nil, inboxIDs(msgs)); err != nil {
		t.Fatalf("AppendFolded: %v", err)
	}
	checkEvents(t, mustEvents(t, w, run.ID, 1), run.ID, 2, events)
	checkInbox(t, w, ib, run.ID, "c")
	checkLastSlot(t, w, run, 3)
	if ok, err := ib.Withdraw(ctx, run.ID, "a"); err != nil || ok {
		t.Fatalf("Withdraw of a folded message = %v, %v; want false", ok, err)
	}
	// A fold may only take messages out (a redelivery of one in the log).
	if _, err := ib.AppendFolded(ctx, a.Owner, run.ID, 4, nil, nil, []string{"c"}); err != nil {
		t.Fatalf("AppendFolded of no events: %v", err)
	}
	checkInbox(t, w, ib, run.ID)
	checkLastSlot(t, w, run, 3)
}

// A fold that names a message withdrawn meanwhile writes nothing: the
// message was the resumer's again, and must not be in the log as well.
func testInboxFoldWithdrawn(t *testing.T, w world.World) {
	ib, run, a := inboxRun(t, w)
	ctx := testContext(t)
	at := now()
	mustDeliver(t, ib, run.ID, message("a", "1", at), message("b", "1", at))
	msgs := mustInbox(t, ib, run.ID)
	if ok, err := ib.Withdraw(ctx, run.ID, "b"); err != nil || !ok {
		t.Fatalf("Withdraw = %v, %v", ok, err)
	}
	_, err := ib.AppendFolded(ctx, a.Owner, run.ID, 2, []world.Event{msgs[0].Event, msgs[1].Event}, nil, inboxIDs(msgs))
	if !errors.Is(err, world.ErrInboxChanged) {
		t.Fatalf("AppendFolded of a withdrawn message: %v, want ErrInboxChanged", err)
	}
	if evs := mustEvents(t, w, run.ID, 1); len(evs) != 0 {
		t.Fatalf("the refused fold wrote %+v", evs)
	}
	checkInbox(t, w, ib, run.ID, "a")
}

// Only the lease holder folds: another invocation's fold changes nothing.
func testInboxFoldFenced(t *testing.T, w world.World) {
	ib, run, _ := inboxRun(t, w)
	m := message("a", "1", now())
	mustDeliver(t, ib, run.ID, m)
	_, err := ib.AppendFolded(testContext(t), unique("other"), run.ID, 2, []world.Event{m.Event}, nil, []string{m.ID})
	if !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("AppendFolded by a non-holder: %v, want ErrLeaseLost", err)
	}
	if evs := mustEvents(t, w, run.ID, 1); len(evs) != 0 {
		t.Fatalf("the fenced fold wrote %+v", evs)
	}
	checkInbox(t, w, ib, run.ID, "a")
}

// A fold behind the log's end loses the slot like any append: it learns
// what it missed, and the messages stay in the inbox.
func testInboxFoldLosesSlot(t *testing.T, w world.World) {
	ib, run, a := inboxRun(t, w)
	m := message("a", "1", now())
	mustDeliver(t, ib, run.ID, m)
	other := ev(world.RunCancelled, "", "")
	if _, err := w.AppendLeased(testContext(t), a.Owner, run.ID, 2, []world.Event{ev(world.StepCreated, "1", "")}, nil); err != nil {
		t.Fatalf("AppendLeased: %v", err)
	}
	missed, err := ib.AppendFolded(testContext(t), a.Owner, run.ID, 2, []world.Event{m.Event, other}, nil, []string{m.ID})
	if !errors.Is(err, world.ErrSlotTaken) || len(missed) != 1 || missed[0].Slot != 2 {
		t.Fatalf("AppendFolded at a taken slot: %+v, %v; want the event at slot 2 and ErrSlotTaken", missed, err)
	}
	checkInbox(t, w, ib, run.ID, "a")
}

// Messages belong to the run, not to a lease: one delivered while an
// invocation held the lease is there for the next holder after the
// release, and the releaser sees it too (the engine reads the inbox after
// releasing, so that a delivery just before the release is not left
// waiting for its deferred wake-up).
func testInboxAcrossRelease(t *testing.T, w world.World) {
	ib, run, a := inboxRun(t, w)
	ctx := testContext(t)
	mustDeliver(t, ib, run.ID, message("a", "1", now()))
	if _, err := w.ReleaseLease(ctx, run.ID, world.Release{Owner: a.Owner, Seen: 1, Suspended: true}); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	msgs := checkInbox(t, w, ib, run.ID, "a")
	at := now()
	b := lease(unique("b"), at, time.Minute)
	if _, err := w.AcquireLease(ctx, run.ID, b, at); err != nil {
		t.Fatalf("AcquireLease after the release: %v", err)
	}
	if _, err := ib.AppendFolded(ctx, a.Owner, run.ID, 2, []world.Event{msgs[0].Event}, nil, inboxIDs(msgs)); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("AppendFolded by the former holder: %v, want ErrLeaseLost", err)
	}
	if _, err := ib.AppendFolded(ctx, b.Owner, run.ID, 2, []world.Event{msgs[0].Event}, nil, inboxIDs(msgs)); err != nil {
		t.Fatalf("AppendFolded by the new holder: %v", err)
	}
	checkInbox(t, w, ib, run.ID)
}
