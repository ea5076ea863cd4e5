package worldtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var appendLimitTests = []test{
	{"MaxAppendFitsOneAppend", testMaxAppendFits},
	{"MaxAppendFitsOneLeasedAppend", testMaxAppendFitsLeased},
}

// fullBatch is as many step events as the World says one append takes.
func fullBatch(t *testing.T, l world.AppendLimiter) []world.Event {
	n := l.MaxAppend()
	if n < 1 {
		t.Fatalf("MaxAppend() = %d, want at least 1", n)
	}
	evs := make([]world.Event, n)
	for i := range evs {
		evs[i] = ev(world.StepCreated, fmt.Sprint(i+1), `{"name":"s"}`)
	}
	return evs
}

// An append of MaxAppend events is written whole, by AppendEvents (an
// append from outside the run) as by AppendLeased (the engine's own).
func testMaxAppendFits(t *testing.T, w world.World) {
	evs := fullBatch(t, optional[world.AppendLimiter](t, w))
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	mustAppend(t, w, run.ID, 2, nil, evs...)
	checkEvents(t, mustEvents(t, w, run.ID, 1), run.ID, 2, evs)
}

func testMaxAppendFitsLeased(t *testing.T, w world.World) {
	evs := fullBatch(t, optional[world.AppendLimiter](t, w))
	run, a, _ := heldRun(t, w, time.Minute)
	missed, err := w.AppendLeased(testContext(t), a.Owner, run.ID, 2, evs, nil)
	if err != nil || len(missed) != 0 {
		t.Fatalf("AppendLeased of %d events: %d missed, %v", len(evs), len(missed), err)
	}
	checkEvents(t, mustEvents(t, w, run.ID, 1), run.ID, 2, evs)
}
