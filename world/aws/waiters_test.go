package aws

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/waitrate"
)

// waiterMaxRate is the most a waiting caller may ask of a World that cannot
// notify, once its first second is over: requests a second.
const waiterMaxRate = 5.0

// Every kind of waiter backs off, whether the run it waits on sleeps or
// keeps appending: after its first second, at most waiterMaxRate requests
// a second. Each waiter runs on a World of its own (same resources), so
// its call counter holds its requests alone and not the worker's.
func TestWaitersBackOff(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), 2*time.Minute)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	for _, k := range append(waitrate.Kinds, waitrate.BusyKinds...) {
		t.Run(k.Name, func(t *testing.T) {
			waiter, err := New(emulatorConfig(t), w.Options())
			if err != nil {
				t.Fatal(err)
			}
			rate, err := waitrate.Rate(ctx, k, workflow.NewClient(waiter), waiter, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %.1f requests a second while waiting (%.0f a waiting minute)", k.Name, rate, rate*60)
			if rate > waiterMaxRate {
				t.Errorf("%s made %.1f requests a second after its first second, want at most %.0f", k.Name, rate, waiterMaxRate)
			}
		})
	}
}

// holdOrWait holds a token through a nap; a run that finds the token held
// waits, durably, for the holder's result (the idempotency pattern).
var holdOrWait = workflow.Define("aws-test.hold-or-wait", func(ctx workflow.Context, req struct {
	Token string
	Nap   time.Duration
}) (string, error) {
	h := workflow.CreateHook[string](ctx, workflow.WithToken(req.Token))
	if original := h.Conflict(ctx); original != "" {
		out, err := workflow.RunHandleOf[string](original).Result(ctx)
		return "copy of " + out, err
	}
	workflow.Sleep(ctx, req.Nap)
	return "original", nil
})

// The hook-conflict handle's Result waits inside a run, so its requests
// are the worker's: while the holder sleeps (making none), everything the
// worker asks for is the waiting run's. Each check is a burst (a status
// step, a durable sleep that suspends the run, its wake-up), so the rate
// is taken over several.
func TestConflictHandleResultBacksOff(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	c := workflow.NewClient(w)
	var holder *workflow.Run[string]
	conflicted := waitrate.Kind{Name: "conflict handle", Prepare: func(ctx context.Context, c *workflow.Client, nap time.Duration) (func() error, error) {
		req := struct {
			Token string
			Nap   time.Duration
		}{"aws-test:" + fmt.Sprint(time.Now().UnixNano()), nap + time.Second} // wakes after the copy's wait
		var err error
		if holder, err = workflow.Start(ctx, c, holdOrWait, req); err != nil {
			return nil, err
		}
		for _, err := c.GetHook(ctx, req.Token); err != nil; _, err = c.GetHook(ctx, req.Token) {
			if !errors.Is(err, workflow.ErrHookNotFound) {
				return nil, err
			}
			time.Sleep(20 * time.Millisecond) // the holder has not claimed it yet
		}
		return func() error {
			copied, err := workflow.Start(ctx, c, holdOrWait, req)
			if err != nil {
				return err
			}
			got, err := copied.Result(ctx)
			if err == nil && got != "copy of original" {
				err = fmt.Errorf("the copy answered %q", got)
			}
			return err
		}, nil
	}}
	rate, err := waitrate.Rate(ctx, conflicted, c, w, 20*time.Second) // three of its checks
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("conflict handle: %.1f requests a second while waiting (%.0f a waiting minute)", rate, rate*60)
	if rate > waiterMaxRate {
		t.Errorf("the conflict handle's Result made %.1f requests a second after its first second, want at most %.0f", rate, waiterMaxRate)
	}
	if got, err := holder.Result(ctx); err != nil || got != "original" {
		t.Fatalf("holder: %q, %v", got, err)
	}
}
