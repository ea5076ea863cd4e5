package worldtest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Clock is a clock a retention test moves by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock at the wall clock's now.
func NewClock() *Clock { return &Clock{now: time.Now()} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Retention holds a World to the retention rule (world/retention.go): a
// finished run, its log and its streams are gone once the retention has
// passed since it ended, a closed reply stream once world.ReplyRetention
// has passed, a running run is never touched, and world.KeepForever keeps
// finished runs. open returns a World that keeps finished runs for
// retention and reckons time by clock. The rule calls what the engine
// calls at a run's end (world.Expirer) and what the World's owner calls to
// delete (world.Sweeper); a World with neither must hide expired runs
// from its readers by itself.
func Retention(t *testing.T, open func(t *testing.T, retention time.Duration, clock *Clock) world.World) {
	t.Run("FinishedRunExpires", func(t *testing.T) {
		clock := NewClock()
		w := open(t, time.Hour, clock)
		finished, finishedStream := finishedRun(t, w)
		running := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""), ev(world.RunStarted, "", ""))
		runningStream := world.RunStreamPrefix(running.ID) + "stream/early"
		reply := "replies/" + unique("resume")
		for _, name := range []string{runningStream, reply} {
			writeClosed(t, w, name)
		}
		expireRun(t, w, finished.ID, finishedStream, reply)

		clock.Advance(59 * time.Minute)
		sweep(t, w)
		mustEvents(t, w, finished.ID, 0)
		checkChunks(t, w, finishedStream, 1)
		checkChunks(t, w, reply, 1)

		clock.Advance(2 * time.Minute)
		sweep(t, w)
		if _, err := w.GetRun(testContext(t), finished.ID); !errors.Is(err, world.ErrRunNotFound) {
			t.Errorf("GetRun of a run past its retention: %v, want ErrRunNotFound", err)
		}
		if _, err := w.Events(testContext(t), finished.ID, 0); !errors.Is(err, world.ErrRunNotFound) {
			t.Errorf("Events of a run past its retention: %v, want ErrRunNotFound", err)
		}
		page, err := w.ListRuns(testContext(t), world.RunFilter{Workflow: finished.Workflow})
		if err != nil || len(page.Runs) != 0 {
			t.Errorf("ListRuns of the expired run's workflow: %v, %v; want none", page.Runs, err)
		}
		checkChunks(t, w, finishedStream, 0)
		checkChunks(t, w, reply, 0)

		// Older than the retention, but not finished: untouched.
		if got, err := w.GetRun(testContext(t), running.ID); err != nil || got.Status != world.StatusPending {
			t.Errorf("GetRun of the running run: %+v, %v", got, err)
		}
		if evs := mustEvents(t, w, running.ID, 0); len(evs) != 2 {
			t.Errorf("the running run's log holds %d events, want 2", len(evs))
		}
		checkChunks(t, w, runningStream, 1)
	})
	t.Run("KeepForever", func(t *testing.T) {
		clock := NewClock()
		w := open(t, world.KeepForever, clock)
		finished, stream := finishedRun(t, w)
		expireRun(t, w, finished.ID, stream)
		clock.Advance(100 * 365 * 24 * time.Hour)
		sweep(t, w)
		if got, err := w.GetRun(testContext(t), finished.ID); err != nil || got.Status != world.StatusCompleted {
			t.Errorf("GetRun of a finished run kept for ever: %+v, %v", got, err)
		}
		if evs := mustEvents(t, w, finished.ID, 0); len(evs) != 3 {
			t.Errorf("the kept run's log holds %d events, want 3", len(evs))
		}
		checkChunks(t, w, stream, 1)
	})
}

// finishedRun creates a run of three events, the last one its end, and a
// closed stream of its own.
func finishedRun(t *testing.T, w world.World) (world.Run, string) {
	t.Helper()
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""), ev(world.RunStarted, "", ""))
	stream := world.RunStreamPrefix(run.ID) + "stream/default"
	writeClosed(t, w, stream)
	update := &world.RunUpdate{Status: world.StatusCompleted, Output: []byte(`1`)}
	if _, err := w.AppendEvents(testContext(t), run.ID, 3, []world.Event{ev(world.RunCompleted, "", "")}, update); err != nil {
		t.Fatalf("finish run: %v", err)
	}
	return run, stream
}

func writeClosed(t *testing.T, w world.World, name string) {
	t.Helper()
	ctx := testContext(t)
	if err := w.WriteStream(ctx, name, [][]byte{[]byte("chunk")}); err != nil {
		t.Fatalf("WriteStream(%s): %v", name, err)
	}
	if err := w.CloseStream(ctx, name); err != nil {
		t.Fatalf("CloseStream(%s): %v", name, err)
	}
}

// expireRun does what the engine does after a run's end is written.
func expireRun(t *testing.T, w world.World, runID string, streams ...string) {
	t.Helper()
	if ex, ok := w.(world.Expirer); ok {
		if err := ex.ExpireRun(testContext(t), runID, streams); err != nil {
			t.Fatalf("ExpireRun: %v", err)
		}
	}
}

func sweep(t *testing.T, w world.World) {
	t.Helper()
	if s, ok := w.(world.Sweeper); ok {
		if _, err := s.Sweep(testContext(t), 1000); err != nil {
			t.Fatalf("Sweep: %v", err)
		}
	}
}

func checkChunks(t *testing.T, w world.World, name string, want int) {
	t.Helper()
	chunks, _, err := w.ReadStream(testContext(t), name, 0)
	if err != nil || len(chunks) != want {
		t.Errorf("ReadStream(%s): %d chunks, %v; want %d", name, len(chunks), err, want)
	}
}
