package worldtest

import (
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var leaseTests = []test{
	{"Exclusive", testLeaseExclusive},
	{"Expiry", testLeaseExpiry},
	{"Renew", testLeaseRenew},
	{"ReleaseReportsLastSlot", testLeaseRelease},
	{"FencesAppends", testLeaseFencesAppends},
	{"RaceHasOneWinner", testLeaseRace},
}

// leasedRun creates a run with one event, ready to be leased.
func leasedRun(t *testing.T, w world.World) world.Run {
	return createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
}

func lease(owner string, at time.Time, ttl time.Duration) world.Lease {
	return world.Lease{Owner: owner, Until: at.Add(ttl)}
}

// heldRun creates a run and leases it at at, to a new owner, for ttl.
func heldRun(t *testing.T, w world.World, ttl time.Duration) (run world.Run, a world.Lease, at time.Time) {
	run = leasedRun(t, w)
	at = now()
	a = lease(unique("a"), at, ttl)
	if _, err := w.AcquireLease(testContext(t), run.ID, a, at); err != nil {
		t.Fatalf("AcquireLease of a free run: %v", err)
	}
	return run, a, at
}

func testLeaseExclusive(t *testing.T, w world.World) {
	run, a, at := heldRun(t, w, time.Minute)
	ctx := testContext(t)
	b := lease(unique("b"), at, time.Minute)
	held, err := w.AcquireLease(ctx, run.ID, b, at)
	if !errors.Is(err, world.ErrLeaseHeld) || held.Owner != a.Owner || !held.Until.Equal(a.Until) {
		t.Fatalf("AcquireLease of a run leased to another: %+v, %v; want %+v and ErrLeaseHeld", held, err, a)
	}
	if _, err := w.AcquireLease(ctx, run.ID, a, at); err != nil {
		t.Fatalf("AcquireLease by the holder (a retried request): %v", err)
	}
	if _, err := w.AcquireLease(ctx, unique("missing"), a, at); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("AcquireLease of a missing run: %v, want ErrRunNotFound", err)
	}
}

func testLeaseExpiry(t *testing.T, w world.World) {
	run, a, _ := heldRun(t, w, time.Second)
	ctx := testContext(t)
	later := a.Until.Add(time.Millisecond)
	b := lease(unique("b"), later, time.Minute)
	if _, err := w.AcquireLease(ctx, run.ID, b, a.Until.Add(-time.Millisecond)); !errors.Is(err, world.ErrLeaseHeld) {
		t.Fatalf("AcquireLease just before the holder's Until: %v, want ErrLeaseHeld", err)
	}
	if _, err := w.AcquireLease(ctx, run.ID, b, later); err != nil {
		t.Fatalf("AcquireLease of an expired lease: %v", err)
	}
	if err := w.RenewLease(ctx, run.ID, lease(a.Owner, later, time.Minute)); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("RenewLease by the owner it was taken from: %v, want ErrLeaseLost", err)
	}
	if _, err := w.ReleaseLease(ctx, run.ID, world.Release{Owner: a.Owner}); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("ReleaseLease by the owner it was taken from: %v, want ErrLeaseLost", err)
	}
	if held, err := w.AcquireLease(ctx, run.ID, lease(unique("c"), later, time.Minute), later); !errors.Is(err, world.ErrLeaseHeld) || held.Owner != b.Owner {
		t.Fatalf("the taken-over lease is not b's: %+v, %v", held, err)
	}
}

func testLeaseRenew(t *testing.T, w world.World) {
	run, a, at := heldRun(t, w, time.Second)
	ctx := testContext(t)
	if err := w.RenewLease(ctx, run.ID, lease(unique("stranger"), at, time.Hour)); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("RenewLease by a non-owner: %v, want ErrLeaseLost", err)
	}
	// Past its Until but not taken, the lease is still a's to renew.
	renewed := lease(a.Owner, at, time.Hour)
	if err := w.RenewLease(ctx, run.ID, renewed); err != nil {
		t.Fatalf("RenewLease by the owner: %v", err)
	}
	held, err := w.AcquireLease(ctx, run.ID, lease(unique("b"), at, time.Minute), a.Until.Add(time.Minute))
	if !errors.Is(err, world.ErrLeaseHeld) || !held.Until.Equal(renewed.Until) {
		t.Fatalf("a renewed lease lapsed at its old Until: %+v, %v", held, err)
	}
}

func testLeaseRelease(t *testing.T, w world.World) {
	run, a, at := heldRun(t, w, time.Hour)
	ctx := testContext(t)
	// An outside writer (a hook resume) appends while a holds the lease.
	mustAppend(t, w, run.ID, 2, nil, ev(world.HookReceived, "1", ""))
	if _, err := w.ReleaseLease(ctx, run.ID, world.Release{Owner: unique("stranger")}); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("ReleaseLease by a non-owner: %v, want ErrLeaseLost", err)
	}
	last, err := w.ReleaseLease(ctx, run.ID, world.Release{Owner: a.Owner})
	if err != nil || last != 2 {
		t.Fatalf("ReleaseLease: last slot %d, %v; want 2", last, err)
	}
	if _, err := w.ReleaseLease(ctx, run.ID, world.Release{Owner: a.Owner}); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("ReleaseLease twice: %v, want ErrLeaseLost", err)
	}
	if _, err := w.AcquireLease(ctx, run.ID, lease(unique("b"), at, time.Hour), at); err != nil {
		t.Fatalf("AcquireLease after a release: %v", err)
	}
}

func testLeaseFencesAppends(t *testing.T, w world.World) {
	run := leasedRun(t, w)
	ctx := testContext(t)
	at := now()
	a := lease(unique("a"), at, time.Second)
	if _, err := w.AppendLeased(ctx, a.Owner, run.ID, 2, []world.Event{ev(world.RunStarted, "", "")}, nil); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("AppendLeased without the lease: %v, want ErrLeaseLost", err)
	}
	if _, err := w.AcquireLease(ctx, run.ID, a, at); err != nil {
		t.Fatal(err)
	}
	started := ev(world.RunStarted, "", "")
	if _, err := w.AppendLeased(ctx, a.Owner, run.ID, 2, []world.Event{started}, &world.RunUpdate{Status: world.StatusRunning}); err != nil {
		t.Fatalf("AppendLeased by the holder: %v", err)
	}
	// A stale slot is reported as for AppendEvents.
	missed, err := w.AppendLeased(ctx, a.Owner, run.ID, 2, []world.Event{ev(world.StepCreated, "1", "")}, nil)
	if !errors.Is(err, world.ErrSlotTaken) {
		t.Fatalf("AppendLeased at a taken slot: %v, want ErrSlotTaken", err)
	}
	checkEvents(t, missed, run.ID, 2, []world.Event{started})
	// b takes the expired lease: a, a zombie now, can no longer write.
	later := a.Until.Add(time.Millisecond)
	b := lease(unique("b"), later, time.Minute)
	if _, err := w.AcquireLease(ctx, run.ID, b, later); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendLeased(ctx, a.Owner, run.ID, 3, []world.Event{ev(world.StepCreated, "1", "")}, nil); !errors.Is(err, world.ErrLeaseLost) {
		t.Fatalf("AppendLeased by the owner the lease was taken from: %v, want ErrLeaseLost", err)
	}
	if _, err := w.AppendLeased(ctx, b.Owner, run.ID, 3, []world.Event{ev(world.StepCreated, "1", "")}, nil); err != nil {
		t.Fatalf("AppendLeased by the new holder: %v", err)
	}
	// Writers from outside the run need no lease.
	mustAppend(t, w, run.ID, 4, nil, ev(world.HookReceived, "2", ""))
	if r, err := w.GetRun(ctx, run.ID); err != nil || r.Status != world.StatusRunning {
		t.Fatalf("run after leased appends: %+v, %v", r, err)
	}
	if n := len(mustEvents(t, w, run.ID, 0)); n != 4 {
		t.Fatalf("the log has %d events, want 4", n)
	}
}

func testLeaseRace(t *testing.T, w world.World) {
	run := leasedRun(t, w)
	ctx := testContext(t)
	at := now()
	won := make([]bool, 8)
	race(len(won), func(i int) {
		_, err := w.AcquireLease(ctx, run.ID, lease(unique("owner"), at, time.Minute), at)
		won[i] = err == nil
		if err != nil && !errors.Is(err, world.ErrLeaseHeld) {
			t.Errorf("AcquireLease: %v", err)
		}
	})
	winners := 0
	for _, ok := range won {
		if ok {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d invocations acquired one run's lease at once, want 1", winners)
	}
}
