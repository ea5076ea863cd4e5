// Package waitrate measures what a caller waiting on a run asks of a World
// that counts its calls: the run sleeps, making no calls of its own, and
// every call counted after the waiter's first second, up to a second
// before the run wakes, is the waiter's. The AWS World's tests hold the
// waiters to their limit with it; the benchmarks report it.
package waitrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// Grace is the waiter's first second, when its checks come quickly.
const Grace = time.Second

// Counter is a World that counts the calls it sends ((*aws.World)).
type Counter interface {
	Calls() map[string]int64
	ResetCalls()
}

// Kind is one kind of waiter. Prepare starts the run it waits on, which
// sleeps for nap, and returns the wait.
type Kind struct {
	Name    string
	Prepare func(ctx context.Context, c *workflow.Client, nap time.Duration) (wait func() error, err error)
}

// Kinds are the waiters outside a run: Run.Result, Run.Readable and a
// responding hook's caller waiting for its reply.
var Kinds = []Kind{
	{"result", func(ctx context.Context, c *workflow.Client, nap time.Duration) (func() error, error) {
		run, err := workflow.Start(ctx, c, napping, nap)
		return func() error {
			got, err := run.Result(ctx)
			if err == nil && got != "rested" {
				err = fmt.Errorf("the run answered %q", got)
			}
			return err
		}, err
	}},
	{"readable", func(ctx context.Context, c *workflow.Client, nap time.Duration) (func() error, error) {
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
	{"reply", func(ctx context.Context, c *workflow.Client, nap time.Duration) (func() error, error) {
		token := "waitrate:" + fmt.Sprint(time.Now().UnixNano())
		if _, err := workflow.Start(ctx, c, nappingReplier, replierInput{token, nap}); err != nil {
			return nil, err
		}
		for _, err := c.GetHook(ctx, token); err != nil; _, err = c.GetHook(ctx, token) {
			if !errors.Is(err, workflow.ErrHookNotFound) {
				return nil, err
			}
			time.Sleep(20 * time.Millisecond) // the run has not claimed it yet
		}
		return func() error {
			got, err := slowReplies.Resume(ctx, c, token, "hi")
			if err == nil && got != "re: hi" {
				err = fmt.Errorf("the reply was %q", got)
			}
			return err
		}, nil
	}},
}

// busy takes steps of 50 ms, each writing a chunk to the run's stream,
// for the length of a nap and at least busyMinSteps of them (on a loaded
// machine a step can take longer than the nap): its waiters find
// something new at every check.
const busyMinSteps = 10

var (
	busyStep = workflow.DefineStep("waitrate.busy-step", func(ctx context.Context, i int) (int, error) {
		time.Sleep(50 * time.Millisecond)
		w, err := workflow.Writer[int](ctx, "")
		if err == nil {
			err = w.Write(i)
		}
		return i + 1, err
	})
	busy = workflow.Define("waitrate.busy", func(ctx workflow.Context, nap time.Duration) (int, error) {
		n := 0
		for start := workflow.Now(ctx); n < busyMinSteps || workflow.Now(ctx).Sub(start) < nap; {
			var err error
			if n, err = busyStep.Call(ctx, n); err != nil {
				return n, err
			}
		}
		return n, nil
	})
)

// BusyKinds wait on a run that keeps appending and writing its stream:
// they find something new at every check.
var BusyKinds = []Kind{
	{Name: "result of a busy run", Prepare: func(ctx context.Context, c *workflow.Client, nap time.Duration) (func() error, error) {
		run, err := workflow.Start(ctx, c, busy, nap)
		return func() error {
			_, err := run.Result(ctx)
			return err
		}, err
	}},
	{Name: "readable of a busy run", Prepare: func(ctx context.Context, c *workflow.Client, nap time.Duration) (func() error, error) {
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
			if next < busyMinSteps {
				return fmt.Errorf("read %d chunks, want at least %d", next, busyMinSteps)
			}
			return nil
		}, err
	}},
}

// Rate runs the kind's wait, which must outlast nap - 1 s and succeed, and
// returns the requests a second counter saw after the waiter's first
// second, up to a second before the run wakes. Calls of the operations in
// ignore (another client's, such as a worker's idle long poll) are left
// out.
func Rate(ctx context.Context, k Kind, c *workflow.Client, counter Counter, nap time.Duration, ignore ...string) (float64, error) {
	wait, err := k.Prepare(ctx, c, nap)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k.Name, err)
	}
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- wait() }()
	time.Sleep(Grace)
	counter.ResetCalls()
	counting := time.Now()
	time.Sleep(nap - Grace - time.Second)
	var n int64
	for op, count := range counter.Calls() {
		if !slices.Contains(ignore, op) {
			n += count
		}
	}
	// The window is what passed between the reset and the count, not the
	// sleep asked for: a loaded machine oversleeps, and the waiter goes on
	// asking meanwhile.
	window := time.Since(counting)
	if err := <-done; err != nil {
		return 0, fmt.Errorf("%s: %w", k.Name, err)
	}
	if took := time.Since(started); took < nap-time.Second {
		return 0, fmt.Errorf("%s: the wait ended after %v, before the run's %v nap was over", k.Name, took, nap)
	}
	return float64(n) / window.Seconds(), nil
}

// napping sleeps durably, then answers.
var napping = workflow.Define("waitrate.napping", func(ctx workflow.Context, nap time.Duration) (string, error) {
	workflow.Sleep(ctx, nap)
	return "rested", nil
})

type replierInput struct {
	Token string
	Nap   time.Duration
}

var (
	slowReplies = workflow.DefineRespondingHook[string, string]()
	slowReply   = workflow.DefineStep("waitrate.slow-reply", func(ctx context.Context, m workflow.HookMessage[string, string]) (struct{}, error) {
		return struct{}{}, m.Respond(ctx, "re: "+m.Data)
	})
	// nappingReplier takes one message on its token, sleeps, then replies.
	nappingReplier = workflow.Define("waitrate.napping-replier", func(ctx workflow.Context, in replierInput) (string, error) {
		m, err := slowReplies.Create(ctx, workflow.WithToken(in.Token)).Receive(ctx)
		if err != nil {
			return "", err
		}
		workflow.Sleep(ctx, in.Nap)
		_, err = slowReply.Call(ctx, m)
		return "replied", err
	})
)
