package aws

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// napping sleeps, durably, then answers: long enough for its waiters to
// settle into their steady pace.
var napping = workflow.Define("aws-test.napping", func(ctx workflow.Context, d time.Duration) (string, error) {
	workflow.Sleep(ctx, d)
	return "rested", nil
})

// busy takes steps of 50 ms, each writing a chunk to the run's stream,
// for the length of a nap: its waiters find something new at every check.
var (
	busyStep = workflow.DefineStep("aws-test.busy-step", func(ctx context.Context, i int) (int, error) {
		time.Sleep(50 * time.Millisecond)
		w, err := workflow.Writer[int](ctx, "")
		if err == nil {
			err = w.Write(i)
		}
		return i + 1, err
	})
	busy = workflow.Define("aws-test.busy", func(ctx workflow.Context, nap time.Duration) (int, error) {
		n := 0
		for start := workflow.Now(ctx); workflow.Now(ctx).Sub(start) < nap; {
			var err error
			if n, err = busyStep.Call(ctx, n); err != nil {
				return n, err
			}
		}
		return n, nil
	})
)

// nappingReplies sleeps on each message before it answers.
var (
	slowEchoes = workflow.DefineRespondingHook[string, string]()
	slowEcho   = workflow.DefineStep("aws-test.slow-echo", func(ctx context.Context, m workflow.HookMessage[string, string]) (struct{}, error) {
		return struct{}{}, m.Respond(ctx, "echo "+m.Data)
	})
	nappingReplies = workflow.Define("aws-test.napping-replies", func(ctx workflow.Context, req struct {
		Token string
		Nap   time.Duration
	}) (string, error) {
		m, err := slowEchoes.Create(ctx, workflow.WithToken(req.Token)).Receive(ctx)
		if err != nil {
			return "", err
		}
		workflow.Sleep(ctx, req.Nap)
		_, err = slowEcho.Call(ctx, m)
		return "answered", err
	})
)

// The most a waiting caller may ask of a World that cannot notify, once
// its first second is over.
const (
	waiterGrace   = time.Second
	waiterMaxRate = 5.0 // requests a second
)

// Every kind of waiter backs off while the run it waits on sleeps: after
// its first second, at most waiterMaxRate requests a second. Each waiter
// runs on a World of its own (same resources), so its call counter holds
// its requests alone and not the worker's.
func TestWaitersBackOff(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), 2*time.Minute)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	const nap = 5 * time.Second
	// Each waiter starts its run, then returns the wait to measure.
	waiters := []struct {
		name    string
		prepare func(ctx context.Context, c *workflow.Client) (wait func() error, err error)
	}{
		{"Result", func(ctx context.Context, c *workflow.Client) (func() error, error) {
			run, err := workflow.Start(ctx, c, napping, nap)
			return func() error {
				got, err := run.Result(ctx)
				return expect(got, err, "rested")
			}, err
		}},
		{"Readable", func(ctx context.Context, c *workflow.Client) (func() error, error) {
			run, err := workflow.Start(ctx, c, napping, nap)
			return func() error {
				for _, err := range run.Readable(ctx, "", 0) {
					if err != nil {
						return err
					}
				}
				return nil
			}, err
		}},
		{"Result of a busy run", func(ctx context.Context, c *workflow.Client) (func() error, error) {
			run, err := workflow.Start(ctx, c, busy, nap)
			return func() error {
				n, err := run.Result(ctx)
				if err == nil && n < 10 {
					err = fmt.Errorf("the busy run took %d steps", n)
				}
				return err
			}, err
		}},
		{"Readable of a busy run", func(ctx context.Context, c *workflow.Client) (func() error, error) {
			run, err := workflow.Start(ctx, c, busy, nap)
			return func() error {
				next := 0
				for chunk, err := range run.Readable(ctx, "", 0) {
					var i int
					if err == nil {
						err = chunk.Decode(&i)
					}
					if err == nil && i != next {
						err = fmt.Errorf("read chunk %d, want %d", i, next)
					}
					if err != nil {
						return err
					}
					next++
				}
				if next < 10 {
					return fmt.Errorf("read %d chunks", next)
				}
				return nil
			}, err
		}},
		{"reply", func(ctx context.Context, c *workflow.Client) (func() error, error) {
			token := "aws-test:" + fmt.Sprint(time.Now().UnixNano())
			_, err := workflow.Start(ctx, c, nappingReplies, struct {
				Token string
				Nap   time.Duration
			}{token, nap})
			for err == nil {
				if _, err = c.GetHook(ctx, token); errors.Is(err, workflow.ErrHookNotFound) {
					err = nil
					time.Sleep(50 * time.Millisecond) // the run has not created it yet
					continue
				}
				break
			}
			return func() error {
				got, err := slowEchoes.Resume(ctx, c, token, "hi")
				return expect(got, err, "echo hi")
			}, err
		}},
	}
	for _, wt := range waiters {
		t.Run(wt.name, func(t *testing.T) {
			waiter, err := New(emulatorConfig(t), w.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := workflow.NewClient(waiter)
			wait, err := wt.prepare(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			rate := waitingRate(t, waiter, nap, wait)
			t.Logf("%s: %.1f requests a second while waiting (%.0f a waiting minute)", wt.name, rate, rate*60)
			if rate > waiterMaxRate {
				t.Errorf("%s made %.1f requests a second after its first second, want at most %.0f", wt.name, rate, waiterMaxRate)
			}
		})
	}
}

// waitingRate runs wait and returns the requests a second its World sent
// after the waiter's first second, up to a second before the run it waits
// on could end (nap after it started). wait must succeed.
func waitingRate(t *testing.T, waiter *World, nap time.Duration, wait func() error) float64 {
	t.Helper()
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- wait() }()
	time.Sleep(waiterGrace)
	waiter.ResetCalls()
	window := nap - waiterGrace - time.Second
	time.Sleep(window)
	var n int64
	for _, count := range waiter.Calls() {
		n += count
	}
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if took := time.Since(started); took < nap-time.Second {
		t.Fatalf("the wait ended after %v, before the run's %v nap was over: it did not wait", took, nap)
	}
	return float64(n) / window.Seconds()
}

func expect(got string, err error, want string) error {
	if err == nil && got != want {
		err = fmt.Errorf("got %q, want %q", got, want)
	}
	return err
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
// worker asks for is the waiting run's.
func TestConflictHandleResultBacksOff(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	c := workflow.NewClient(w)
	const nap = 12 * time.Second
	req := struct {
		Token string
		Nap   time.Duration
	}{"aws-test:" + fmt.Sprint(time.Now().UnixNano()), nap}
	holder, err := workflow.Start(ctx, c, holdOrWait, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := c.GetHook(ctx, req.Token); err != nil; _, err = c.GetHook(ctx, req.Token) {
		time.Sleep(20 * time.Millisecond) // the holder has not claimed it yet
	}
	rate := waitingRate(t, w, nap-time.Second, func() error {
		copied, err := workflow.Start(ctx, c, holdOrWait, req)
		if err != nil {
			return err
		}
		got, err := copied.Result(ctx)
		return expect(got, err, "copy of original")
	})
	t.Logf("conflict handle: %.1f requests a second while waiting (%.0f a waiting minute)", rate, rate*60)
	if rate > waiterMaxRate {
		t.Errorf("the conflict handle's Result made %.1f requests a second after its first second, want at most %.0f", rate, waiterMaxRate)
	}
	if got, err := holder.Result(ctx); err != nil || got != "original" {
		t.Fatalf("holder: %q, %v", got, err)
	}
}
