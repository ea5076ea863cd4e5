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

// Run statuses. Completed, Failed and Cancelled are terminal.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Terminal reports whether a run in this status can no longer change.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Run is a run seen from ordinary Go code (an HTTP handler, a CLI, a
// test), whose result is an O. Get one from [Start] or [GetRun]. Workflow
// code sees other runs as a [RunHandle] instead.
type Run[O any] struct {
	ID string
	c  *Client
}

// Status returns the run's current status.
func (r *Run[O]) Status(ctx context.Context) (Status, error) {
	run, err := r.c.world.GetRun(ctx, r.ID)
	if err != nil {
		return "", worldError(err)
	}
	return Status(run.Status), nil
}

// Attributes returns the run's attributes, including the reserved
// $parentRunId and $rootRunId of child runs.
func (r *Run[O]) Attributes(ctx context.Context) (map[string]string, error) {
	run, err := r.c.world.GetRun(ctx, r.ID)
	if err != nil {
		return nil, worldError(err)
	}
	return run.Attributes, nil
}

// Result waits until the run ends and returns its result. A failed run
// returns a [*RunFailedError] (errors.Is [ErrRunFailed]) whose cause keeps
// its kind; a cancelled one a [*RunCancelledError]. Waiting is a blocking
// wait on the World where the World supports it; elsewhere it checks the
// run at a world.Pace, at most a few requests a second after its first
// second.
func (r *Run[O]) Result(ctx context.Context) (O, error) {
	var out O
	pace := world.NewPace(1)
	for {
		run, err := r.c.world.GetRun(ctx, r.ID)
		if err != nil {
			return out, worldError(err)
		}
		if run.Status.Terminal() {
			return decodeResult[O](run)
		}
		if err := pace.WaitEvents(ctx, r.c.world, r.ID, run.LastSlot); err != nil {
			return out, err
		}
	}
}

func decodeResult[O any](run world.Run) (O, error) {
	var out O
	switch run.Status {
	case world.StatusCompleted:
		if err := decodeJSON(run.Output, &out); err != nil {
			return out, fmt.Errorf("run %s: decoding result into %T: %w", run.ID, out, err)
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
// already ended is an error matching [ErrRunFinished].
func (r *Run[O]) Cancel(ctx context.Context, reason string) error {
	encoded := encodeError(&RunCancelledError{RunID: r.ID, Reason: reason})
	return worldError(engine.Cancel(ctx, r.c.world, r.ID, reason, encoded, r.c.now()))
}
