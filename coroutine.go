package workflow

import "github.com/lambdaworkflow/workflow/internal/engine"

// Go runs fn as a workflow coroutine and returns a Future for its result:
// the workflow-safe replacement for the go statement, and the Go form of
// Promise.all over helpers that mix steps and sleeps.
//
// Coroutines do not run in parallel: one runs at a time, switching only
// when it blocks on a durable call, in an order replay reproduces. Steps
// they start do run in parallel.
func Go[T any](ctx Context, fn func(ctx Context) (T, error)) Future[T] {
	f := &valueFuture[T]{}
	ctx.engine().Go(func(c *engine.Ctx) {
		f.value, f.err = fn(workflowContext{c})
		f.done = true
	})
	return f
}

// Gather waits for every future and returns their values in order, or the
// first error in argument order.
func Gather[T any](ctx Context, futures ...Future[T]) ([]T, error) {
	out := make([]T, len(futures))
	for i, f := range futures {
		v, err := f.Get(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
