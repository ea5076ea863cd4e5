// Package worldtest is the conformance suite every world.World runs from its
// own tests:
//
//	func TestConformance(t *testing.T) {
//		worldtest.Run(t, func(t *testing.T) world.World { return New() })
//	}
//
// newWorld is called once per subtest and may hand out a fresh World or one
// shared by all subtests, so every subtest names its runs, hook tokens and
// streams with a random suffix and ignores queue messages it did not send.
// Subtests run one after another: queue subtests could otherwise receive,
// and hide, each other's messages in a shared World.
//
// The suite runs on the wall clock and keeps its waits short (a few hundred
// milliseconds), so Worlds under test must use real time.
//
// Run holds every World to the whole of world.World, and each World to the
// rules of the optional interfaces it has, found by type assertion; a rule
// of one it lacks is skipped, with the reason:
//
//   - world.Notifier: the Wait rules, through world.WaitEvents and
//     world.WaitStream, which use it (and poll on a World without it);
//   - world.RunReader: RunReader; world.Inbox: Inbox (and two rules of
//     Overdue and RunReader); world.AppendLimiter: AppendLimiter;
//     world.UnsyncedReader: Unsynced.
//
// Three need a World set up for them, so a World that has one runs its
// rule itself: world.StreamSubscriber, RunPush (two Worlds on one store);
// world.DeadLetters, DeadLetters (a fresh World that dead-letters soon);
// world.Sweeper and world.Expirer, Retention (a World on a clock the test
// moves).
package worldtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Run runs the conformance suite against the Worlds newWorld returns.
func Run(t *testing.T, newWorld func(t *testing.T) world.World) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Runs", runTests},
		{"Events", eventTests},
		{"Hooks", hookTests},
		{"Queue", queueTests},
		{"Streams", streamTests},
		{"Wait", waitTests},
		{"Race", raceTests},
		{"Starter", starterTests},
		{"Lease", leaseTests},
		{"RunReader", runReaderTests},
		{"LastSlot", lastSlotTests},
		{"AppendLimiter", appendLimitTests},
		{"Overdue", overdueTests},
		{"Inbox", inboxTests},
		{"Limiter", limiterTests},
		{"Unsynced", unsyncedTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, newWorld(t)) })
			}
		})
	}
}

type test struct {
	name string
	run  func(t *testing.T, w world.World)
}

// unique returns prefix with a random suffix, so that subtests sharing a
// World never touch each other's runs, tokens or streams.
func unique(prefix string) string { return prefix + "-" + rand.Text() }

// testContext bounds every subtest, so a World that never answers fails the
// test instead of hanging it.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// now is the wall clock at millisecond precision, which every backend keeps.
func now() time.Time { return time.Now().Truncate(time.Millisecond) }

// newRun returns a pending run of workflow with a unique ID.
func newRun(workflow string) world.Run {
	at := now()
	return world.Run{
		ID:        unique("run"),
		Workflow:  workflow,
		Status:    world.StatusPending,
		Input:     json.RawMessage(`{"n":1}`),
		CreatedAt: at,
		UpdatedAt: at,
	}
}

// ev is an event as a writer hands it to the World: no slot, no run ID.
func ev(typ world.EventType, corr, payload string) world.Event {
	e := world.Event{Type: typ, CorrelationID: corr, CreatedAt: now()}
	if payload != "" {
		e.Payload = json.RawMessage(payload)
	}
	return e
}

// createRun creates a run with first as its first events, failing the test
// on error.
func createRun(t *testing.T, w world.World, run world.Run, first ...world.Event) world.Run {
	t.Helper()
	got, err := w.CreateRun(testContext(t), run, first)
	if err != nil {
		t.Fatalf("CreateRun(%s): %v", run.ID, err)
	}
	return got
}

// mustAppend appends events at from, failing the test on error.
func mustAppend(t *testing.T, w world.World, runID string, from int64, update *world.RunUpdate, events ...world.Event) {
	t.Helper()
	missed, err := w.AppendEvents(testContext(t), runID, from, events, update)
	if err != nil {
		t.Fatalf("AppendEvents(%s, from %d): %v", runID, from, err)
	}
	if len(missed) != 0 {
		t.Fatalf("AppendEvents(%s, from %d) succeeded but returned %d missed events", runID, from, len(missed))
	}
}

// mustEvents reads the log after slot after, failing the test on error.
func mustEvents(t *testing.T, w world.World, runID string, after int64) []world.Event {
	t.Helper()
	evs, err := w.Events(testContext(t), runID, after)
	if err != nil {
		t.Fatalf("Events(%s, after %d): %v", runID, after, err)
	}
	return evs
}

// checkEvents compares a log read back from the World with the events that
// were written, which must sit at slots firstSlot, firstSlot+1, ...
func checkEvents(t *testing.T, got []world.Event, runID string, firstSlot int64, want []world.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %+v", len(got), len(want), got)
	}
	for i, g := range got {
		w := want[i]
		slot := firstSlot + int64(i)
		if g.RunID != runID || g.Slot != slot || g.Type != w.Type || g.CorrelationID != w.CorrelationID ||
			!jsonEqual(g.Payload, w.Payload) || !g.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("event %d = %+v, want %+v at slot %d of run %s", i, g, w, slot, runID)
		}
	}
}

// jsonEqual compares JSON by value: a World may store payloads in a form
// that does not keep their bytes (a JSON column, say).
func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// race starts n goroutines that call f(i) at the same moment and waits for
// them all.
func race(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}
