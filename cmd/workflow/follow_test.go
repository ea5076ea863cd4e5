package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lambdaworkflow/workflow/internal/timeline"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// endsAfterRead ends its run right after the first read of the run's
// events that finds any, so that a follower looking at the run next sees
// it ended with an event it has not read yet.
type endsAfterRead struct {
	world.World
	t    *testing.T
	once sync.Once
}

func (w *endsAfterRead) Events(ctx context.Context, runID string, after int64) ([]world.Event, error) {
	events, err := w.World.Events(ctx, runID, after)
	if len(events) > 0 {
		w.once.Do(func() {
			end := []world.Event{{Type: world.RunCompleted, Payload: []byte(`{"output":7}`)}}
			if _, err := w.AppendEvents(ctx, runID, events[len(events)-1].Slot+1, end, &world.RunUpdate{Status: world.StatusCompleted, Output: []byte("7")}); err != nil {
				w.t.Error(err)
			}
		})
	}
	return events, err
}

func TestFollowPrintsTheLastEventOfARunThatEndsBetweenReads(t *testing.T) {
	mem := memory.New()
	createRuns(t, mem, world.Run{ID: "live", Workflow: "checkout", Status: world.StatusRunning})
	r, err := mem.GetRun(t.Context(), "live")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err = followRun(t.Context(), &endsAfterRead{World: mem, t: t}, nil, r, nil, &timeline.Renderer{}, &env{out: &out})
	if err != nil || r.Status != world.StatusCompleted {
		t.Fatalf("follow ended with %s, %v; want the run completed", r.Status, err)
	}
	if s := out.String(); !strings.Contains(s, "run_created") || !strings.Contains(s, "run_completed") {
		t.Fatalf("followed events:\n%s\nwant run_created and run_completed", s)
	}
}
