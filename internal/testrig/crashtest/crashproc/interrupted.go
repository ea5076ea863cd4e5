package crashproc

import (
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// CheckInterruptedAttempts fails t unless the run's log records exactly
// want failed attempts, each saying it was still running at its deadline:
// what a restarted worker writes for an attempt a kill cut short, whichever
// World holds the log.
func CheckInterruptedAttempts(t testing.TB, events []world.Event, want int) {
	t.Helper()
	failures := 0
	for _, ev := range events {
		if ev.Type == world.StepRetrying || ev.Type == world.StepFailed {
			failures++
			if !strings.Contains(string(ev.Payload), "still running at its deadline") {
				t.Errorf("slot %d: the failure does not say the attempt outlived its deadline: %s", ev.Slot, ev.Payload)
			}
		}
	}
	if failures != want {
		t.Fatalf("the log records %d failed attempts, want %d", failures, want)
	}
}
