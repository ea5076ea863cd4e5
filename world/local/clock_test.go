package local_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestClock checks that the World takes time from WithClock's clock: for
// message delays, hook retention and UpdatedAt.
func TestClock(t *testing.T) {
	ctx := t.Context()
	clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	w := open(t, t.TempDir(), local.WithClock(clock))

	check(t, "Enqueue", w.Enqueue(ctx, world.Message{RunID: "later", DeliverAt: clock.Now().Add(time.Hour)}))
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if d, err := w.Receive(short, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Receive before DeliverAt on the fake clock = %+v, %v", d, err)
	}
	clock.advance(time.Hour)
	d, err := w.Receive(ctx, time.Minute)
	check(t, "Receive once the fake clock reaches DeliverAt", err)
	if d.RunID != "later" {
		t.Fatalf("delivery = %+v", d)
	}

	hook := world.Hook{Token: "tok", RunID: "run", CorrelationID: "h"}
	check(t, "ClaimHook", ignore(w.ClaimHook(ctx, hook, false)))
	check(t, "DisposeHook", w.DisposeHook(ctx, hook.Token, hook.RunID, clock.Now().Add(time.Hour)))
	check(t, "GetHook of a retained hook", ignore(w.GetHook(ctx, hook.Token)))
	clock.advance(2 * time.Hour)
	if _, err := w.GetHook(ctx, hook.Token); !errors.Is(err, world.ErrHookNotFound) {
		t.Fatalf("GetHook after the fake clock passed the retention: err = %v", err)
	}

	check(t, "CreateRun", ignore(w.CreateRun(ctx, world.Run{ID: "run", Workflow: "wf", Status: world.StatusPending}, nil)))
	check(t, "AppendEvents", ignore(w.AppendEvents(ctx, "run", 1, nil, &world.RunUpdate{Status: world.StatusRunning})))
	r, err := w.GetRun(ctx, "run")
	check(t, "GetRun", err)
	if !r.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("UpdatedAt = %v, want the fake clock's %v", r.UpdatedAt, clock.Now())
	}
}

// TestCloseReleasesWaiters checks that Close ends a Receive waiting on an
// empty queue instead of leaving it to its context.
func TestCloseReleasesWaiters(t *testing.T) {
	w, err := local.Open(t.TempDir())
	check(t, "Open", err)
	errc := make(chan error, 1)
	go func() {
		_, err := w.Receive(context.Background(), time.Minute)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	check(t, "Close", w.Close())
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("Receive returned no error after Close")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Receive still waiting after Close")
	}
}
