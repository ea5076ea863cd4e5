package engine

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// raceAfterListing is a World on which another writer appends to a run
// right after the check lists it overdue.
type raceAfterListing struct {
	*memory.World
	t *testing.T
}

func (r raceAfterListing) OverdueRuns(ctx context.Context, before, now time.Time, limit int) ([]world.OverdueRun, error) {
	found, err := r.World.OverdueRuns(ctx, before, now, limit)
	for _, f := range found {
		if _, err := r.AppendEvents(ctx, f.RunID, f.LastSlot+1, []world.Event{{Type: world.HookReceived, CreatedAt: now}}, nil); err != nil {
			r.t.Fatal(err)
		}
	}
	return found, err
}

// A run the check would fail, whose log grows between the listing and the
// failure (its re-queued message arrived after all), is left running, and
// its lease free for the invocation that moves it.
func TestStuckCheckSparesARunThatMoved(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	startTestRun(t, mem)
	now := time.Now().Add(time.Hour)
	e := newTestEngine(mem, nil)
	e.Now = func() time.Time { return now }
	if r, err := e.CheckStuck(ctx, time.Minute); err != nil || len(r.Requeued) != 1 {
		t.Fatalf("the first check: %+v, %v; want the run re-queued", r, err)
	}
	now = now.Add(time.Hour)
	e.World = raceAfterListing{World: mem, t: t}
	if r, err := e.CheckStuck(ctx, time.Minute); err != nil || len(r.Failed) != 0 {
		t.Fatalf("the second check: %+v, %v; want nothing failed", r, err)
	}
	if run, err := mem.GetRun(ctx, testRunID); err != nil || run.Status.Terminal() {
		t.Fatalf("the run that moved: %+v, %v; want it unfinished", run, err)
	}
	if _, err := mem.AcquireLease(ctx, testRunID, world.Lease{Owner: "next", Until: now.Add(time.Minute)}, time.Now()); err != nil {
		t.Fatalf("the check kept the lease of a run it spared: %v", err)
	}
}
