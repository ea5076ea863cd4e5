package worldtest

import (
	"encoding/json"
	"errors"
	"maps"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

var eventTests = []test{
	{"AppendAssignsSlots", testAppendAssignsSlots},
	{"EventsAfter", testEventsAfter},
	{"EventsOfMissingRun", testEventsOfMissingRun},
	{"SlotTakenReturnsMissed", testSlotTakenReturnsMissed},
	{"AppendAppliesUpdate", testAppendAppliesUpdate},
	{"LostAppendLeavesRun", testLostAppendLeavesRun},
	{"FinishedRunRefusesAppend", testFinishedRunRefusesAppend},
	{"AppendToMissingRun", testAppendToMissingRun},
}

func testAppendAssignsSlots(t *testing.T, w world.World) {
	ctx := testContext(t)
	first := ev(world.RunCreated, "", `{"a":1}`)
	run := createRun(t, w, newRun(unique("wf")), first)
	// The World sets Slot and RunID whatever the writer put there.
	batch := []world.Event{ev(world.StepCreated, "step-1", `{"name":"s"}`), ev(world.StepStarted, "step-1", "")}
	batch[0].Slot, batch[0].RunID = 99, "someone-else"
	missed, err := w.AppendEvents(ctx, run.ID, 2, batch, nil)
	if err != nil || len(missed) != 0 {
		t.Fatalf("AppendEvents = %v, %v; want no missed events and no error", missed, err)
	}
	batch[0].Slot, batch[0].RunID = 0, ""
	checkEvents(t, mustEvents(t, w, run.ID, 0), run.ID, 1, append([]world.Event{first}, batch...))
}

func testEventsAfter(t *testing.T, w world.World) {
	all := []world.Event{ev(world.RunCreated, "", ""), ev(world.RunStarted, "", ""), ev(world.StepCreated, "s", `{"i":3}`)}
	run := createRun(t, w, newRun(unique("wf")), all...)
	for after := int64(0); after <= 4; after++ {
		want := all[min(after, int64(len(all))):]
		checkEvents(t, mustEvents(t, w, run.ID, after), run.ID, after+1, want)
	}
}

func testEventsOfMissingRun(t *testing.T, w world.World) {
	if _, err := w.Events(testContext(t), unique("missing"), 0); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("Events of a missing run: err = %v, want ErrRunNotFound", err)
	}
}

func testSlotTakenReturnsMissed(t *testing.T, w world.World) {
	ctx := testContext(t)
	log := []world.Event{ev(world.RunCreated, "", ""), ev(world.RunStarted, "", `{"by":"a"}`), ev(world.StepCreated, "s1", `{"by":"a"}`)}
	run := createRun(t, w, newRun(unique("wf")), log...)

	for _, from := range []int64{1, 2, 3} {
		lost := []world.Event{ev(world.StepCreated, "s2", `{"by":"b"}`), ev(world.StepStarted, "s2", "")}
		missed, err := w.AppendEvents(ctx, run.ID, from, lost, nil)
		if !errors.Is(err, world.ErrSlotTaken) {
			t.Fatalf("AppendEvents at taken slot %d: err = %v, want ErrSlotTaken", from, err)
		}
		checkEvents(t, missed, run.ID, from, log[from-1:])
	}
	// Nothing of the lost batches was written.
	checkEvents(t, mustEvents(t, w, run.ID, 0), run.ID, 1, log)
}

func testAppendAppliesUpdate(t *testing.T, w world.World) {
	ctx := testContext(t)
	r := newRun(unique("wf"))
	r.Attributes = map[string]string{"team": "x", "tier": "1"}
	run := createRun(t, w, r, ev(world.RunCreated, "", ""))

	before := now()
	mustAppend(t, w, run.ID, 2, &world.RunUpdate{Status: world.StatusRunning, Attributes: map[string]string{"tier": "2", "step": "a"}},
		ev(world.RunStarted, "", ""))
	want := run
	want.Status = world.StatusRunning
	want.Attributes = map[string]string{"team": "x", "tier": "2", "step": "a"}
	got := mustGetRun(t, w, run.ID)
	if got.UpdatedAt.Before(before) {
		t.Errorf("UpdatedAt = %v, want at least %v", got.UpdatedAt, before)
	}
	want.UpdatedAt = got.UpdatedAt
	checkRun(t, "GetRun after a status and attribute update", got, want)

	// Zero fields of an update leave the run as it is.
	mustAppend(t, w, run.ID, 3, &world.RunUpdate{Output: json.RawMessage(`{"out":1}`)}, ev(world.StepCreated, "s", ""))
	mustAppend(t, w, run.ID, 4, &world.RunUpdate{Error: json.RawMessage(`{"msg":"boom"}`)}, ev(world.StepFailed, "s", ""))
	got = mustGetRun(t, w, run.ID)
	want.Output, want.Error, want.UpdatedAt = json.RawMessage(`{"out":1}`), json.RawMessage(`{"msg":"boom"}`), got.UpdatedAt
	checkRun(t, "GetRun after output and error updates", got, want)

	// An update may come with no events.
	mustAppend(t, w, run.ID, 5, &world.RunUpdate{Attributes: map[string]string{"late": "yes"}})
	got = mustGetRun(t, w, run.ID)
	maps.Copy(want.Attributes, map[string]string{"late": "yes"})
	want.UpdatedAt = got.UpdatedAt
	checkRun(t, "GetRun after an update without events", got, want)
	if n := len(mustEvents(t, w, run.ID, 0)); n != 4 {
		t.Errorf("log has %d events, want 4", n)
	}
	if _, err := w.AppendEvents(ctx, run.ID, 5, []world.Event{ev(world.StepStarted, "s", "")}, nil); err != nil {
		t.Errorf("AppendEvents after an update without events: %v", err)
	}
}

func testLostAppendLeavesRun(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""), ev(world.RunStarted, "", ""))
	_, err := w.AppendEvents(testContext(t), run.ID, 2, []world.Event{ev(world.RunCompleted, "", "")},
		&world.RunUpdate{Status: world.StatusCompleted, Output: json.RawMessage(`1`), Attributes: map[string]string{"k": "v"}})
	if !errors.Is(err, world.ErrSlotTaken) {
		t.Fatalf("AppendEvents at a taken slot: err = %v, want ErrSlotTaken", err)
	}
	checkRun(t, "GetRun after a lost append with an update", mustGetRun(t, w, run.ID), run)
}

func testFinishedRunRefusesAppend(t *testing.T, w world.World) {
	for _, status := range []world.RunStatus{world.StatusCompleted, world.StatusFailed, world.StatusCancelled} {
		ctx := testContext(t)
		run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
		mustAppend(t, w, run.ID, 2, &world.RunUpdate{Status: status}, ev(world.RunCompleted, "", ""))

		_, err := w.AppendEvents(ctx, run.ID, 3, []world.Event{ev(world.StepCreated, "late", "")}, nil)
		if !errors.Is(err, world.ErrRunFinished) {
			t.Errorf("AppendEvents to a %s run: err = %v, want ErrRunFinished", status, err)
		}
		_, err = w.AppendEvents(ctx, run.ID, 3, nil, &world.RunUpdate{Status: world.StatusRunning})
		if !errors.Is(err, world.ErrRunFinished) {
			t.Errorf("update of a %s run: err = %v, want ErrRunFinished", status, err)
		}
		if n := len(mustEvents(t, w, run.ID, 0)); n != 2 {
			t.Errorf("%s run's log has %d events, want 2", status, n)
		}
		if got := mustGetRun(t, w, run.ID).Status; got != status {
			t.Errorf("status = %s, want %s", got, status)
		}
	}
}

func testAppendToMissingRun(t *testing.T, w world.World) {
	_, err := w.AppendEvents(testContext(t), unique("missing"), 1, []world.Event{ev(world.RunStarted, "", "")}, nil)
	if !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("AppendEvents to a missing run: err = %v, want ErrRunNotFound", err)
	}
}
