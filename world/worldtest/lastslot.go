package worldtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// Run.LastSlot is what a writer from outside the run (a canceller, a hook
// resumer) appends after, and what a waiter waits past: the World keeps it
// on every path that writes the log.
var lastSlotTests = []test{
	{"AfterCreate", testLastSlotAfterCreate},
	{"AfterStart", testLastSlotAfterStart},
	{"AfterAppends", testLastSlotAfterAppends},
	{"SeveralWriters", testLastSlotSeveralWriters},
}

// checkLastSlot fails the test unless GetRun and ListRuns both report the
// run's last slot as want.
func checkLastSlot(t *testing.T, w world.World, run world.Run, want int64) {
	t.Helper()
	ctx := testContext(t)
	got, err := w.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if got.LastSlot != want {
		t.Errorf("GetRun(%s).LastSlot = %d, want %d", run.ID, got.LastSlot, want)
	}
	page, err := w.ListRuns(ctx, world.RunFilter{Workflow: run.Workflow})
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	for _, r := range page.Runs {
		if r.ID == run.ID && r.LastSlot != want {
			t.Errorf("ListRuns lists %s with LastSlot %d, want %d", run.ID, r.LastSlot, want)
		}
	}
}

func testLastSlotAfterCreate(t *testing.T, w world.World) {
	empty := createRun(t, w, newRun(unique("wf")))
	if empty.LastSlot != 0 {
		t.Errorf("CreateRun without events returned LastSlot %d, want 0", empty.LastSlot)
	}
	checkLastSlot(t, w, empty, 0)

	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""), ev(world.RunStarted, "", ""))
	if run.LastSlot != 2 {
		t.Errorf("CreateRun with 2 events returned LastSlot %d, want 2", run.LastSlot)
	}
	checkLastSlot(t, w, run, 2)
}

func testLastSlotAfterStart(t *testing.T, w world.World) {
	run := newRun(unique("wf"))
	started, err := w.StartRun(testContext(t), run, []world.Event{ev(world.RunCreated, "", "")}, world.Message{RunID: run.ID})
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	if started.LastSlot != 1 {
		t.Errorf("StartRun with 1 event returned LastSlot %d, want 1", started.LastSlot)
	}
	checkLastSlot(t, w, run, 1)
}

func testLastSlotAfterAppends(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	mustAppend(t, w, run.ID, 2, &world.RunUpdate{Status: world.StatusRunning}, ev(world.RunStarted, "", ""))
	checkLastSlot(t, w, run, 2)
	mustAppend(t, w, run.ID, 3, nil, ev(world.StepCreated, "1", ""), ev(world.StepStarted, "1", ""), ev(world.StepCompleted, "1", ""))
	checkLastSlot(t, w, run, 5)
	mustAppend(t, w, run.ID, 6, &world.RunUpdate{Status: world.StatusCompleted}, ev(world.RunCompleted, "", ""))
	checkLastSlot(t, w, run, 6)
}

// testLastSlotSeveralWriters: writers that each append after the LastSlot
// GetRun told them, as outside writers do, all get their events in, and
// the run ends with LastSlot at its last event. A writer alone on the run
// never loses its first append.
func testLastSlotSeveralWriters(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	race(racers, func(i int) {
		for n := range writerAppends {
			if err := appendAfterLastSlot(t, w, run.ID, ev(world.HookReceived, fmt.Sprint(i), fmt.Sprint(n))); err != nil {
				t.Errorf("writer %d: %v", i, err)
				return
			}
		}
	})
	total := int64(1 + racers*writerAppends)
	checkLastSlot(t, w, run, total)
	if got := int64(len(mustEvents(t, w, run.ID, 0))); got != total {
		t.Fatalf("the log has %d events, want %d", got, total)
	}

	// Alone on the run now, an outside writer's first try lands.
	got, err := w.GetRun(testContext(t), run.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if missed, err := w.AppendEvents(testContext(t), run.ID, got.LastSlot+1, []world.Event{ev(world.RunCancelled, "", "")}, nil); err != nil {
		t.Fatalf("append after GetRun's LastSlot %d on a quiet run: %v (missed %d events)", got.LastSlot, err, len(missed))
	}
	checkLastSlot(t, w, run, total+1)
}

// writerAppends is how many events each writer of SeveralWriters appends.
const writerAppends = 5

// appendAfterLastSlot appends e at the end of the log the way an outside
// writer does: after GetRun's LastSlot, and after what it missed when
// another writer was first. A try loses only to another writer's event, so
// it needs at most one try more than the others append in all.
func appendAfterLastSlot(t *testing.T, w world.World, runID string, e world.Event) error {
	run, err := w.GetRun(testContext(t), runID)
	if err != nil {
		return err
	}
	from := run.LastSlot + 1
	for range racers*writerAppends + 1 {
		missed, err := w.AppendEvents(testContext(t), runID, from, []world.Event{e}, nil)
		if !errors.Is(err, world.ErrSlotTaken) {
			return err
		}
		if len(missed) == 0 {
			return fmt.Errorf("slot %d taken, but no missed events returned", from)
		}
		from = missed[len(missed)-1].Slot + 1
	}
	return errors.New("never found a free slot")
}
