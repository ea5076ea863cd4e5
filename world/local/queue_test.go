package local

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// TestReceiveWritesNothing: a worker's Receive takes its run's message
// without a write of its own (the take is written with the World's next
// write, the run's lease on the worker's path), and the Receive it makes
// at once after handing the delivery on, with nothing else due, does not
// even take the writer: each was a write transaction holding the writer
// while the delivered run waited for its lease. A message queued later is
// still received.
func TestReceiveWritesNothing(t *testing.T) {
	w, err := Open(t.TempDir())
	check(t, "Open", err)
	defer w.Close()
	ctx := t.Context()
	attemptOf := func(runID string) int {
		t.Helper()
		var n int
		check(t, "attempt", w.rdb.QueryRowContext(ctx, `SELECT attempt FROM queue WHERE run_id = ?`, runID).Scan(&n))
		return n
	}
	quietSweeper(t, w)
	check(t, "Enqueue", w.Enqueue(ctx, world.Message{RunID: "a"}))
	d, err := w.Receive(ctx, time.Minute)
	check(t, "Receive", err)
	if d.RunID != "a" || d.Attempt != 1 {
		t.Fatalf("received %+v, want run a's first delivery", d)
	}
	if n := attemptOf("a"); n != 0 {
		t.Fatalf("the Receive wrote its take (attempt %d): it must leave it to the next write", n)
	}

	w.wmu.Lock() // a Receive that needs the writer waits here
	done, cancel := context.WithCancel(ctx)
	cancel()
	got := make(chan error, 1)
	go func() {
		_, err := w.Receive(done, time.Minute)
		got <- err
	}()
	select {
	case err := <-got:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Receive on an empty queue = %v, want it to wait until its context ends", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("a Receive with nothing due after a take waited for the writer")
	}
	w.wmu.Unlock()
	if t.Failed() {
		t.FailNow()
	}

	check(t, "Enqueue", w.Enqueue(ctx, world.Message{RunID: "b"}))
	if n := attemptOf("a"); n != 1 {
		t.Fatalf("after the next write run a's message has attempt %d, want its take written with it (1)", n)
	}
	d, err = w.Receive(ctx, time.Minute)
	check(t, "Receive", err)
	if d.RunID != "b" {
		t.Fatalf("received run %q, want b (a is hidden)", d.RunID)
	}
}

// quietSweeper claims w's queue and waits for the sweep that starts with
// it, which writes, to be done: the next is minutes away. It plants an
// expired run and waits until the sweep has deleted it.
func quietSweeper(t *testing.T, w *World) {
	t.Helper()
	ctx := t.Context()
	old := time.Now().Add(-2 * world.DefaultRetention)
	_, err := w.CreateRun(ctx, world.Run{ID: "expired", Workflow: "wf", Status: world.StatusCompleted, CreatedAt: old, UpdatedAt: old}, nil)
	check(t, "CreateRun", err)
	check(t, "claim the queue", w.claimQueue())
	for {
		if _, err := w.GetRun(ctx, "expired"); errors.Is(err, world.ErrRunNotFound) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the sweep that starts with the queue never deleted an expired run")
		case <-time.After(time.Millisecond):
		}
	}
}
