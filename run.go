package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Status is a run's lifecycle state.
type Status string

// Run statuses. Completed, Failed, Cancelled and Continued are terminal.
// A Continued run ended with [ContinueAsNew]; its handle's Result and
// Status follow it to its successor.
const (
	StatusPending Status = "pending"
	// StatusQueued: the run waits for a slot of its workflow's
	// [WithConcurrency] limit, in its limit key's queue.
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	StatusContinued Status = "continued"
)

// Terminal reports whether a run in this status can no longer change.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled || s == StatusContinued
}

// Run is a run seen from ordinary Go code (an HTTP handler, a CLI, a
// test), whose result is an O. Get one from [Start] or [GetRun]. Workflow
// code sees other runs as a [RunHandle] instead.
type Run[O any] struct {
	ID string
	c  *Client
}

// Status returns the run's current status: that of the latest run of its
// chain if it continued as new ([StatusPending] while the successor is
// being created).
func (r *Run[O]) Status(ctx context.Context) (Status, error) {
	run, err := engine.Latest(ctx, r.c.world, r.ID)
	if err != nil {
		return "", err
	}
	if run.Status == world.StatusContinued {
		return StatusPending, nil
	}
	return Status(run.Status), nil
}

// Attributes returns the run's attributes, including the reserved
// $parentRunId and $rootRunId of child runs.
func (r *Run[O]) Attributes(ctx context.Context) (map[string]string, error) {
	run, err := r.c.world.GetRun(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return run.Attributes, nil
}

// Result waits until the run ends and returns its result. A failed run
// returns a [*RunFailedError] (errors.Is [ErrRunFailed]) whose cause keeps
// its kind; a cancelled one a [*RunCancelledError]. Waiting is a blocking
// wait on the World where the World supports it; elsewhere it checks the
// run at a world.Pace, at most a few requests a second after its first
// second. A run that continued as new ([ContinueAsNew]) returns the result
// of the last run of its chain.
func (r *Run[O]) Result(ctx context.Context) (O, error) {
	var out O
	pace := world.NewPace(1)
	for id := r.ID; ; {
		run, err := engine.Latest(ctx, r.c.world, id)
		if err != nil {
			return out, err
		}
		id = run.ID // a later check starts where the chain was
		switch {
		case run.Status == world.StatusContinued: // its successor is being created
			err = pace.Pause(ctx)
		case run.Status.Terminal():
			if run.Output, err = engine.OpenOutput(ctx, r.c.codec, run); err != nil {
				return out, err
			}
			return decodeResult[O](run)
		default:
			err = pace.WaitEvents(ctx, r.c.world, run.ID, run.LastSlot)
		}
		if err != nil {
			return out, err
		}
	}
}

func decodeResult[O any](run world.Run) (O, error) {
	var out O
	switch run.Status {
	case world.StatusCompleted:
		if err := decodeJSON(run.Output, &out); err != nil {
			return out, fmt.Errorf("workflow: run %s: decoding result into %T: %w", run.ID, out, err)
		}
		return out, nil
	case world.StatusCancelled:
		var cancelled *RunCancelledError
		if len(run.Error) > 0 && errors.As(decodeError(run.Error), &cancelled) {
			return out, cancelled
		}
		return out, &RunCancelledError{RunID: run.ID}
	default:
		return out, &RunFailedError{RunID: run.ID, Err: decodeError(run.Error)}
	}
}

// Cancel ends the run with a reason. Steps running for it have their
// contexts cancelled; its hooks are released. Cancelling a run that has
// already ended is an error matching [ErrRunFinished]. On a run that
// continued as new it cancels the latest run of the chain.
func (r *Run[O]) Cancel(ctx context.Context, reason string) error {
	return engine.Cancel(ctx, r.c.world, r.ID, reason, cancelledError(reason), r.c.now())
}
