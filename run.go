package workflow

import (
	"context"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Status is a run's lifecycle state.
type Status = world.RunStatus

// Run statuses.
const (
	StatusPending   = world.StatusPending
	StatusRunning   = world.StatusRunning
	StatusCompleted = world.StatusCompleted
	StatusFailed    = world.StatusFailed
	StatusCancelled = world.StatusCancelled
)

// Run is a handle on a run whose result is an O.
type Run[O any] struct {
	ID string
	c  *Client
}

// Status returns the run's current status.
func (r *Run[O]) Status(ctx context.Context) (Status, error) {
	run, err := r.c.world.GetRun(ctx, r.ID)
	if err != nil {
		return "", wrapNotFound(err)
	}
	return run.Status, nil
}

// Attributes returns the run's attributes, including the reserved
// $parentRunId and $rootRunId of child runs.
func (r *Run[O]) Attributes(ctx context.Context) (map[string]string, error) {
	run, err := r.c.world.GetRun(ctx, r.ID)
	if err != nil {
		return nil, wrapNotFound(err)
	}
	return run.Attributes, nil
}

// Result waits until the run ends and returns its result. A failed run
// returns a *RunFailedError (errors.Is ErrRunFailed) whose cause keeps its
// kind; a cancelled one a *RunCancelledError. Waiting is a blocking wait on
// the World, not a polling loop, where the World supports it.
func (r *Run[O]) Result(ctx context.Context) (O, error) {
	var out O
	for {
		run, err := r.c.world.GetRun(ctx, r.ID)
		if err != nil {
			return out, wrapNotFound(err)
		}
		if run.Status.Terminal() {
			return decodeResult[O](run)
		}
		if err := world.WaitEvents(ctx, r.c.world, r.ID, run.LastSlot); err != nil {
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
		if cancelled, ok := decodeError(run.Error).(*RunCancelledError); ok && len(run.Error) > 0 {
			return out, cancelled
		}
		return out, &RunCancelledError{RunID: run.ID}
	default:
		return out, &RunFailedError{RunID: run.ID, Err: decodeError(run.Error)}
	}
}

// Cancel ends the run with a reason. Steps running for it have their
// contexts cancelled; its hooks are released. Cancelling a run that has
// already ended is an error matching world.ErrRunFinished.
func (r *Run[O]) Cancel(ctx context.Context, reason string) error {
	encoded := encodeError(&RunCancelledError{RunID: r.ID, Reason: reason})
	return wrapNotFound(engine.Cancel(ctx, r.c.world, r.ID, reason, encoded, r.c.now()))
}

// Events returns the run's event log.
func (r *Run[O]) Events(ctx context.Context) ([]world.Event, error) {
	evs, err := r.c.world.Events(ctx, r.ID, 0)
	return evs, wrapNotFound(err)
}
