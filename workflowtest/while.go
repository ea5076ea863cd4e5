package workflowtest

import (
	"context"
	"time"
)

// While runs fn on a goroutine of its own and processes the environment's
// runs, as their messages arrive, until fn returns. It is for code that
// waits on a workflow from outside, such as a ResumeRespondingHook caller
// waiting for its reply, which the environment would otherwise only serve
// after the call returned:
//
//	env.While(func() {
//		quote, err = workflow.ResumeRespondingHook[Query, Quote](ctx, env.Client, token, q)
//	})
//
// Time does not skip meanwhile: a timer the reply depends on needs an
// Advance. fn must not call t.Fatal (it is not the test's goroutine); use
// t.Error, or return what it got to the test.
func (e *Env) While(fn func()) {
	e.t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	for {
		e.RunUntilIdle()
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-done:
				cancel()
			case <-ctx.Done():
			}
		}()
		d, err := e.World.Receive(ctx, time.Hour)
		cancel()
		if err != nil {
			e.RunUntilIdle() // what fn did last
			return
		}
		if err := e.worker.Handle(context.Background(), d); err != nil {
			e.t.Fatalf("workflowtest: processing run %s: %v", d.RunID, err)
		}
	}
}
