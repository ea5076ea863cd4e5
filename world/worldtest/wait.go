package worldtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// The wait subtests go through world.WaitEvents and world.WaitStream, which
// use the World's Notifier if it has one and poll otherwise.
var waitTests = []test{
	{"EventsReady", testWaitEventsReady},
	{"EventsWakeOnAppend", testWaitEventsWakeOnAppend},
	{"EventsTimeout", testWaitEventsTimeout},
	{"StreamReady", testWaitStreamReady},
	{"StreamWakeOnWrite", testWaitStreamWakeOnWrite},
	{"StreamWakeOnClose", testWaitStreamWakeOnClose},
}

// wakeWithin is how soon a waiter must see a change: generous, so that a
// polling World passes, yet short enough to catch a waiter that is never
// woken and only returns when its context ends.
const wakeWithin = 2 * time.Second

func testWaitEventsReady(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""), ev(world.RunStarted, "", ""))
	for _, after := range []int64{0, 1} {
		if err := world.WaitEvents(testContext(t), w, run.ID, after); err != nil {
			t.Fatalf("WaitEvents(after %d) with the event there: %v", after, err)
		}
	}
}

// afterDelay runs f on another goroutine after a short delay, long enough
// for the caller to start waiting. The test does not end before f has.
func afterDelay(t *testing.T, f func()) {
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		time.Sleep(50 * time.Millisecond)
		f()
	}()
}

// waitWoken runs wait with a context that outlives wakeWithin and fails the
// test unless it returns nil in time.
func waitWoken(t *testing.T, what string, wait func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), 2*wakeWithin)
	defer cancel()
	start := time.Now()
	if err := wait(ctx); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d := time.Since(start); d > wakeWithin {
		t.Errorf("%s returned after %v", what, d)
	}
}

func testWaitEventsWakeOnAppend(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	afterDelay(t, func() {
		if _, err := w.AppendEvents(testContext(t), run.ID, 2, []world.Event{ev(world.RunStarted, "", "")}, nil); err != nil {
			t.Errorf("AppendEvents: %v", err)
		}
	})
	waitWoken(t, "WaitEvents", func(ctx context.Context) error { return world.WaitEvents(ctx, w, run.ID, 1) })
	if n := len(mustEvents(t, w, run.ID, 1)); n != 1 {
		t.Fatalf("WaitEvents returned with %d new events, want 1", n)
	}
}

func testWaitEventsTimeout(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	ctx, cancel := context.WithTimeout(testContext(t), 100*time.Millisecond)
	defer cancel()
	if err := world.WaitEvents(ctx, w, run.ID, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitEvents with no new event: err = %v, want context.DeadlineExceeded", err)
	}
}

func testWaitStreamReady(t *testing.T, w world.World) {
	name := unique("stream")
	mustWrite(t, w, name, "a")
	if err := world.WaitStream(testContext(t), w, name, 0); err != nil {
		t.Fatalf("WaitStream with the chunk there: %v", err)
	}
	ctx, cancel := context.WithTimeout(testContext(t), 100*time.Millisecond)
	defer cancel()
	if err := world.WaitStream(ctx, w, name, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitStream past the last chunk: err = %v, want context.DeadlineExceeded", err)
	}
}

func testWaitStreamWakeOnWrite(t *testing.T, w world.World) {
	name := unique("stream")
	afterDelay(t, func() {
		if err := w.WriteStream(testContext(t), name, [][]byte{[]byte("a")}); err != nil {
			t.Errorf("WriteStream: %v", err)
		}
	})
	waitWoken(t, "WaitStream", func(ctx context.Context) error { return world.WaitStream(ctx, w, name, 0) })
	checkRead(t, w, name, 0, []string{"a"}, false)
}

func testWaitStreamWakeOnClose(t *testing.T, w world.World) {
	name := unique("stream")
	mustWrite(t, w, name, "a")
	afterDelay(t, func() {
		if err := w.CloseStream(testContext(t), name); err != nil {
			t.Errorf("CloseStream: %v", err)
		}
	})
	waitWoken(t, "WaitStream", func(ctx context.Context) error { return world.WaitStream(ctx, w, name, 1) })
	checkRead(t, w, name, 1, nil, true)
}
