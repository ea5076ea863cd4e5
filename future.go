package workflow

import (
	"encoding/json"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Awaitable is anything Select can wait on: futures, hooks, timers.
type Awaitable interface {
	// IsReady reports whether waiting on it would return at once.
	IsReady() bool
}

// Future is the eventual result of a durable call started without waiting:
// a step started with Go, a timer from After, a child run, a coroutine.
type Future[T any] interface {
	Awaitable
	// Get waits for the result.
	Get(ctx Context) (T, error)
}

// opFuture is the future of an engine op; wrap, if set, dresses its error.
type opFuture[T any] struct {
	op   *engine.Op
	err  error // set when the call failed before it was issued
	wrap func(error) error
}

func failedFuture[T any](err error) *opFuture[T] { return &opFuture[T]{err: err} }

func (f *opFuture[T]) IsReady() bool { return f.err != nil || f.op.Done() }

func (f *opFuture[T]) Get(ctx Context) (T, error) {
	var out T
	if f.err != nil {
		return out, f.err
	}
	raw, errRaw := ctx.engine().Await(f.op)
	if errRaw != nil {
		err := decodeError(errRaw)
		if f.wrap != nil {
			err = f.wrap(err)
		}
		return out, err
	}
	if err := decodeJSON(raw, &out); err != nil {
		return out, Fatal(fmt.Errorf("workflow: decoding %s result into %T: %w", f.op.Kind, out, err))
	}
	return out, nil
}

// Select waits until at least one of the awaitables is ready and returns
// the index of the first ready one, in argument order. Because results
// reach the workflow in log order, the choice is the same on replay.
func Select(ctx Context, items ...Awaitable) int {
	ready := func() int {
		for i, a := range items {
			if a.IsReady() {
				return i
			}
		}
		return -1
	}
	ctx.engine().Block(func() bool { return ready() >= 0 })
	return ready()
}

// Settled returns a Future that is already resolved, which helps when a
// branch of workflow code has nothing to wait for.
func Settled[T any](value T, err error) Future[T] {
	return &valueFuture[T]{done: true, value: value, err: err}
}

// valueFuture is resolved by workflow code itself (coroutines, Settled).
type valueFuture[T any] struct {
	done  bool
	value T
	err   error
}

func (f *valueFuture[T]) IsReady() bool { return f.done }

func (f *valueFuture[T]) Get(ctx Context) (T, error) {
	ctx.engine().Block(f.IsReady)
	return f.value, f.err
}

// marshal encodes a value crossing into the log.
func marshal(what string, v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("workflow: encoding %s: %w", what, err)
	}
	return b, nil
}
