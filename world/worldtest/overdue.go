package worldtest

import (
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var overdueTests = []test{
	{"NewRunIsDue", testOverdueNewRun},
	{"LiveLeaseHides", testOverdueLeaseHides},
	{"SuspensionSetsWake", testOverdueSuspension},
	{"HookWaitIsNeverDue", testOverdueHookWait},
	{"OutsideAppendIsDue", testOverdueOutsideAppend},
	{"LeasedAppendLeavesDue", testOverdueLeasedAppend},
	{"FinishedIsNeverDue", testOverdueFinished},
	{"RequeueMarksOnce", testOverdueRequeue},
	{"RequeueMarkLasts", testOverdueRequeueMarkLasts},
	{"RequeueByInboxNeedsTheMessage", testOverdueRequeueByInbox},
}

// overdueRun returns run as OverdueRuns lists it for before and now, and
// whether it does. Other subtests' runs may share the World, hence the
// wide limit.
func overdueRun(t *testing.T, w world.World, runID string, before, now time.Time) (world.OverdueRun, bool) {
	t.Helper()
	found, err := w.OverdueRuns(testContext(t), before, now, 10_000)
	if err != nil {
		t.Fatalf("OverdueRuns: %v", err)
	}
	for _, r := range found {
		if r.RunID == runID {
			return r, true
		}
	}
	return world.OverdueRun{}, false
}

// wantOverdue fails the test unless run is listed overdue (or, with want
// false, unless it is not).
func wantOverdue(t *testing.T, w world.World, runID string, before time.Time, want bool, why string) world.OverdueRun {
	t.Helper()
	r, ok := overdueRun(t, w, runID, before, before)
	if ok != want {
		t.Fatalf("%s: listed overdue before %s: %v, want %v (%+v)", why, before.Format(time.StampMilli), ok, want, r)
	}
	return r
}

// leaseAndRelease leases the run and releases it with release, whose Owner
// it fills in.
func leaseAndRelease(t *testing.T, w world.World, runID string, release world.Release) {
	t.Helper()
	ctx := testContext(t)
	release.Owner = unique("inv")
	if _, err := w.AcquireLease(ctx, runID, lease(release.Owner, now(), time.Minute), now()); err != nil {
		t.Fatalf("AcquireLease: %v", err)
	}
	if _, err := w.ReleaseLease(ctx, runID, release); err != nil {
		t.Fatalf("ReleaseLease(%+v): %v", release, err)
	}
}

// A run is due when it is created: its first message follows.
func testOverdueNewRun(t *testing.T, w world.World) {
	before := now()
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	wantOverdue(t, w, run.ID, before.Add(-time.Minute), false, "a run created a minute later")
	r := wantOverdue(t, w, run.ID, now().Add(time.Minute), true, "a new run, a minute on")
	if r.LastSlot != 1 || r.Requeued || r.Due.Before(before.Add(-time.Second)) {
		t.Fatalf("a new run is listed as %+v; want last slot 1, due about %s, not re-queued", r, before)
	}
}

// A run whose lease is live is moving, however overdue; once the lease's
// Until is past, it is not.
func testOverdueLeaseHides(t *testing.T, w world.World) {
	run, a, _ := heldRun(t, w, time.Hour)
	later := now().Add(time.Minute)
	if _, ok := overdueRun(t, w, run.ID, later, later); ok {
		t.Fatal("a run with a live lease is listed overdue")
	}
	if _, ok := overdueRun(t, w, run.ID, later, a.Until.Add(time.Second)); !ok {
		t.Fatal("a run whose holder's lease lapsed is not listed overdue")
	}
}

// A suspension makes the run due at its wake-up.
func testOverdueSuspension(t *testing.T, w world.World) {
	run := leasedRun(t, w)
	wake := now().Add(time.Hour)
	leaseAndRelease(t, w, run.ID, world.Release{Seen: 1, Suspended: true, Wake: wake})
	wantOverdue(t, w, run.ID, wake.Add(-time.Minute), false, "a sleeping run, a minute before its wake-up")
	if r := wantOverdue(t, w, run.ID, wake.Add(time.Minute), true, "a sleeping run, a minute after its wake-up"); !r.Due.Equal(wake) {
		t.Fatalf("due %s, want the wake-up %s", r.Due, wake)
	}
}

// A run waiting only for a hook is never due; if the log grew past what
// the releaser saw, it is due now whatever the releaser says.
func testOverdueHookWait(t *testing.T, w world.World) {
	run := leasedRun(t, w)
	leaseAndRelease(t, w, run.ID, world.Release{Seen: 1, Suspended: true})
	wantOverdue(t, w, run.ID, now().Add(100*365*24*time.Hour), false, "a run waiting for a hook, a century on")

	ctx := testContext(t)
	owner := unique("inv")
	if _, err := w.AcquireLease(ctx, run.ID, lease(owner, now(), time.Minute), now()); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, run.ID, 2, nil, ev(world.HookReceived, "1", "")) // while the releaser looks away
	if last, err := w.ReleaseLease(ctx, run.ID, world.Release{Owner: owner, Seen: 1, Suspended: true}); err != nil || last != 2 {
		t.Fatalf("ReleaseLease: last slot %d, %v; want 2", last, err)
	}
	wantOverdue(t, w, run.ID, now().Add(time.Minute), true, "a run released past an event its releaser did not see")
}

// An append from outside (a resume) makes a waiting run due now.
func testOverdueOutsideAppend(t *testing.T, w world.World) {
	run := leasedRun(t, w)
	leaseAndRelease(t, w, run.ID, world.Release{Seen: 1, Suspended: true})
	before := now()
	mustAppend(t, w, run.ID, 2, nil, ev(world.HookReceived, "1", ""))
	wantOverdue(t, w, run.ID, before.Add(-time.Minute), false, "a run resumed a minute later")
	if r := wantOverdue(t, w, run.ID, now().Add(time.Minute), true, "a resumed run, a minute on"); r.LastSlot != 2 {
		t.Fatalf("listed at last slot %d, want 2", r.LastSlot)
	}
}

// An invocation's own appends leave the due time as it was: the lease
// says the run moves, and the hot path writes nothing more.
func testOverdueLeasedAppend(t *testing.T, w world.World) {
	run, a, _ := heldRun(t, w, time.Minute)
	// Waiting for a hook: never due.
	if _, err := w.ReleaseLease(testContext(t), run.ID, world.Release{Owner: a.Owner, Seen: 1, Suspended: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(testContext(t), run.ID, a, now()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendLeased(testContext(t), a.Owner, run.ID, 2, []world.Event{ev(world.StepCompleted, "1", "")}, nil); err != nil {
		t.Fatalf("AppendLeased: %v", err)
	}
	if _, ok := overdueRun(t, w, run.ID, now().Add(time.Hour), a.Until.Add(time.Hour)); ok {
		t.Fatal("an append under the lease made a run due that waited for a hook")
	}
}

// A finished run is never due.
func testOverdueFinished(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	mustAppend(t, w, run.ID, 2, &world.RunUpdate{Status: world.StatusCompleted}, ev(world.RunCompleted, "", ""))
	wantOverdue(t, w, run.ID, now().Add(time.Hour), false, "a finished run")
}

// MarkRequeued marks an overdue run once, due again at its now; a run that
// moved, is leased or is gone is not marked.
func testOverdueRequeue(t *testing.T, w world.World) {
	ctx := testContext(t)
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	later := now().Add(time.Hour)
	found := wantOverdue(t, w, run.ID, later, true, "a new run, an hour on")
	if err := w.MarkRequeued(ctx, world.OverdueRun{RunID: unique("gone"), LastSlot: 1, Due: found.Due}, later); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("MarkRequeued of a missing run: %v, want ErrRunNotFound", err)
	}
	if err := w.MarkRequeued(ctx, world.OverdueRun{RunID: run.ID, LastSlot: 2, Due: found.Due}, later); !errors.Is(err, world.ErrNotOverdue) {
		t.Fatalf("MarkRequeued at a slot the run has not reached: %v, want ErrNotOverdue", err)
	}
	if err := w.MarkRequeued(ctx, found, later); err != nil {
		t.Fatalf("MarkRequeued: %v", err)
	}
	if err := w.MarkRequeued(ctx, found, later); !errors.Is(err, world.ErrNotOverdue) {
		t.Fatalf("MarkRequeued twice: %v, want ErrNotOverdue", err)
	}
	wantOverdue(t, w, run.ID, later, false, "a run just re-queued")
	r := wantOverdue(t, w, run.ID, later.Add(time.Minute), true, "a re-queued run, a minute on")
	if !r.Requeued || !r.Due.Equal(later) || r.LastSlot != 1 {
		t.Fatalf("a re-queued run is listed as %+v; want re-queued at slot 1, due %s", r, later)
	}
	// A live lease refuses the mark: an invocation is moving the run.
	if _, err := w.AcquireLease(ctx, run.ID, lease(unique("inv"), later, time.Hour), later); err != nil {
		t.Fatal(err)
	}
	if err := w.MarkRequeued(ctx, r, later.Add(time.Minute)); !errors.Is(err, world.ErrNotOverdue) {
		t.Fatalf("MarkRequeued of a leased run: %v, want ErrNotOverdue", err)
	}
}

// The re-queue mark lasts until the log grows or an invocation suspends
// the run; one that gives the run up (fails, hands off) leaves it.
func testOverdueRequeueMarkLasts(t *testing.T, w world.World) {
	ctx := testContext(t)
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	requeue := func(want int64) {
		t.Helper()
		at := now().Add(time.Hour)
		r := wantOverdue(t, w, run.ID, at, true, "before a re-queue")
		if r.LastSlot != want || r.Requeued {
			t.Fatalf("listed as %+v before its re-queue, want slot %d, not re-queued", r, want)
		}
		if err := w.MarkRequeued(ctx, r, now()); err != nil {
			t.Fatalf("MarkRequeued: %v", err)
		}
	}
	requeued := func(want bool, why string) {
		t.Helper()
		if r := wantOverdue(t, w, run.ID, now().Add(2*time.Hour), true, why); r.Requeued != want {
			t.Fatalf("%s: listed as %+v, want re-queued %v", why, r, want)
		}
	}
	requeue(1)
	leaseAndRelease(t, w, run.ID, world.Release{Seen: 1}) // a failed invocation
	requeued(true, "after a failed invocation")
	mustAppend(t, w, run.ID, 2, nil, ev(world.HookReceived, "1", ""))
	requeued(false, "after the log grew")
	requeue(2)
	leaseAndRelease(t, w, run.ID, world.Release{Seen: 2, Suspended: true, Wake: now().Add(time.Minute)})
	requeued(false, "after a suspension")
}

// A run that waits for a hook is overdue by an old message in its inbox
// (its wake-up was lost). The check queues a message for it, then marks
// it re-queued; if the message left the inbox in between without the log
// moving (its resumer withdrew it: the hook had been taken over), the run
// is rightly idle again, and the mark is refused: marking it due would
// have the next check fail a healthy run as stuck. While the message
// waits, the mark is taken.
func testOverdueRequeueByInbox(t *testing.T, w world.World) {
	ib := optional[world.Inbox](t, w)
	ctx := testContext(t)
	dueByInbox := func() world.OverdueRun {
		t.Helper()
		run := leasedRun(t, w)
		leaseAndRelease(t, w, run.ID, world.Release{Seen: 1, Suspended: true})
		mustDeliver(t, ib, run.ID, message("m", "1", now().Add(-time.Hour)))
		return wantOverdue(t, w, run.ID, now().Add(-30*time.Minute), true, "a run with a message an hour old in its inbox")
	}

	withdrawn := dueByInbox()
	if ok, err := ib.Withdraw(ctx, withdrawn.RunID, "m"); err != nil || !ok {
		t.Fatalf("Withdraw: %v, %v", ok, err)
	}
	if err := w.MarkRequeued(ctx, withdrawn, now()); !errors.Is(err, world.ErrNotOverdue) {
		t.Errorf("MarkRequeued of a run whose overdue message was withdrawn: %v, want ErrNotOverdue", err)
	}
	wantOverdue(t, w, withdrawn.RunID, now().Add(100*365*24*time.Hour), false, "a run waiting for a hook again, its message withdrawn before the mark")

	waiting := dueByInbox()
	if err := w.MarkRequeued(ctx, waiting, now()); err != nil {
		t.Fatalf("MarkRequeued of a run whose overdue message still waits: %v", err)
	}
	if r, ok := overdueRun(t, w, waiting.RunID, now().Add(time.Hour), now().Add(time.Hour)); !ok || !r.Requeued {
		t.Errorf("the re-queued run is listed %+v (%v), want it marked", r, ok)
	}
}
