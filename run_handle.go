package workflow

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// RunHandle is another run seen from workflow code, whose result is an O:
// the workflow side's counterpart of [Run]. Its methods are durable calls,
// recorded in the log like steps, so they replay. Get one with
// [RunHandleOf] (e.g. on the run a [Hook.Conflict] names) or
// [ChildRun.Handle].
type RunHandle[O any] struct {
	ID string
}

// RunHandleOf returns a handle on the run with the given ID, whose result
// is an O. It does no I/O: a wrong ID shows in the handle's calls, as
// ErrRunNotFound.
func RunHandleOf[O any](runID string) *RunHandle[O] { return &RunHandle[O]{ID: runID} }

// runSnapshot is what the built-in status step records about a run.
type runSnapshot struct {
	Status Status          `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Built-in steps behind RunHandle.
var (
	runStatusStep = DefineStep("workflow.runStatus", func(ctx context.Context, runID string) (runSnapshot, error) {
		info, _ := engine.StepInfoFrom(ctx)
		run, err := engine.Latest(ctx, info.World, runID)
		if err != nil {
			return runSnapshot{}, err
		}
		if run.Status == world.StatusContinued { // its successor is being created
			return runSnapshot{Status: StatusPending}, nil
		}
		return runSnapshot{Status: Status(run.Status), Output: run.Output, Error: run.Error}, nil
	})
	cancelRunStep = DefineStep("workflow.cancelRun", func(ctx context.Context, c cancelRequest) (struct{}, error) {
		info, _ := engine.StepInfoFrom(ctx)
		return struct{}{}, engine.Cancel(ctx, info.World, c.RunID, c.Reason, cancelledError(c.Reason), info.Now())
	}, WithMaxRetries(0))
)

// cancelledError encodes the error a run cancelled for reason ends with,
// for the run of the chain the cancellation reaches.
func cancelledError(reason string) func(runID string) json.RawMessage {
	return func(runID string) json.RawMessage {
		return encodeError(&RunCancelledError{RunID: runID, Reason: reason})
	}
}

type cancelRequest struct {
	RunID  string `json:"runId"`
	Reason string `json:"reason"`
}

// Status returns the run's status now (that of the latest run of its
// chain, if it continued as new).
func (r *RunHandle[O]) Status(ctx Context) (Status, error) {
	snap, err := runStatusStep.Call(ctx, r.ID)
	return snap.Status, err
}

// Result waits, durably, until the run ends and returns its result (see
// [Run.Result] for its errors; it too follows a chain of [ContinueAsNew]). The wait checks the run with backoff, from
// resultPollFirst apart up to resultPollMax; the run sleeps in between.
func (r *RunHandle[O]) Result(ctx Context) (O, error) {
	for delay := resultPollFirst; ; delay = min(delay*2, resultPollMax) {
		snap, err := runStatusStep.Call(ctx, r.ID)
		if err != nil {
			var zero O
			return zero, err
		}
		if snap.Status.Terminal() {
			return decodeResult[O](world.Run{ID: r.ID, Status: world.RunStatus(snap.Status), Output: snap.Output, Error: snap.Error})
		}
		Sleep(ctx, delay)
	}
}

// The backoff of RunHandle.Result. Each check is a step and a durable
// sleep, about a dozen requests on AWS (the sleep suspends the run), so
// even the first pauses keep the waiting run under the few requests a
// second any waiter may make.
const (
	resultPollFirst = 2 * time.Second
	resultPollMax   = 5 * time.Minute
)

// Cancel cancels the run (see [Run.Cancel]).
func (r *RunHandle[O]) Cancel(ctx Context, reason string) error {
	_, err := cancelRunStep.Call(ctx, cancelRequest{RunID: r.ID, Reason: reason})
	return err
}
