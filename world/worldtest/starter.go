package worldtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var starterTests = []test{
	{"StartQueuesTheRun", testStartQueuesTheRun},
	{"StartExistingRequeuesUnlessFinished", testStartExisting},
}

func testStartQueuesTheRun(t *testing.T, w world.World) {
	ctx := testContext(t)
	run := newRun(unique("wf"))
	first := ev(world.RunCreated, "", `{"input":1}`)
	created, err := w.StartRun(ctx, run, []world.Event{first}, world.Message{RunID: run.ID})
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	checkRun(t, "StartRun", created, run)
	checkEvents(t, mustEvents(t, w, run.ID, 0), run.ID, 1, []world.Event{first})
	d, err := w.Receive(ctx, time.Minute)
	if err != nil || d.RunID != run.ID {
		t.Fatalf("Receive after StartRun: %+v, %v", d, err)
	}
}

func testStartExisting(t *testing.T, w world.World) {
	ctx := testContext(t)
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	again, err := w.StartRun(ctx, run, nil, world.Message{RunID: run.ID})
	if !errors.Is(err, world.ErrRunExists) || again.ID != run.ID {
		t.Fatalf("StartRun of an existing run: %+v, %v", again, err)
	}
	if d, err := w.Receive(ctx, time.Minute); err != nil || d.RunID != run.ID {
		t.Fatalf("an unfinished existing run was not queued again: %+v, %v", d, err)
	}
	mustAppend(t, w, run.ID, 2, &world.RunUpdate{Status: world.StatusCompleted}, ev(world.RunCompleted, "", ""))
	if _, err := w.StartRun(ctx, run, nil, world.Message{RunID: run.ID, DedupKey: unique("k")}); !errors.Is(err, world.ErrRunExists) {
		t.Fatalf("StartRun of a finished run: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if d, err := w.Receive(short, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a finished run was queued again: %+v, %v", d, err)
	}
}
