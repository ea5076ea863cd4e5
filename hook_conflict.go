package workflow

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Conflict returns the run that holds the hook's token instead of this
// one: the run that held it when this run tried to claim it, or the run
// that took it over since with [WithForceClaim]. It returns nil while
// this run owns the token. The classic use is run idempotency: a duplicate run finds
// the original through a deterministic token and waits for its result.
//
//	h := workflow.CreateHook[struct{}](ctx, workflow.WithToken("order:"+id))
//	if original := h.Conflict(ctx); original != nil {
//		return original.Result(ctx)
//	}
func (h hookCore) Conflict(ctx Context) *RunHandle {
	if owner := ctx.engine().HookOwner(h.op); owner != "" {
		return &RunHandle{ID: owner}
	}
	return nil
}

// RunHandle is another run, seen from workflow code. Its methods are
// durable calls, recorded in the log like steps, so they replay.
type RunHandle struct {
	ID string
}

// runSnapshot is what the built-in status step records about a run.
type runSnapshot struct {
	Status world.RunStatus `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Built-in steps behind RunHandle.
var (
	runStatusStep = DefineStep("workflow.runStatus", func(ctx context.Context, runID string) (runSnapshot, error) {
		info, _ := engine.StepInfoFrom(ctx)
		run, err := info.World.GetRun(ctx, runID)
		if err != nil {
			return runSnapshot{}, wrapNotFound(err)
		}
		return runSnapshot{Status: run.Status, Output: run.Output, Error: run.Error}, nil
	})
	cancelRunStep = DefineStep("workflow.cancelRun", func(ctx context.Context, c cancelRequest) (struct{}, error) {
		info, _ := engine.StepInfoFrom(ctx)
		encoded := encodeError(&RunCancelledError{RunID: c.RunID, Reason: c.Reason})
		return struct{}{}, wrapNotFound(engine.Cancel(ctx, info.World, c.RunID, c.Reason, encoded, info.Now()))
	}, WithMaxRetries(0))
)

type cancelRequest struct {
	RunID  string `json:"runId"`
	Reason string `json:"reason"`
}

// Status returns the run's status now.
func (r *RunHandle) Status(ctx Context) (Status, error) {
	snap, err := runStatusStep.Call(ctx, r.ID)
	return snap.Status, err
}

// Result waits, durably, until the run ends and returns its result,
// decoded from JSON into an any (see Run.Result for its errors). The wait
// checks the run with backoff, from a second apart up to resultPollMax;
// the run sleeps in between.
func (r *RunHandle) Result(ctx Context) (any, error) {
	for delay := time.Second; ; delay = min(delay*2, resultPollMax) {
		snap, err := runStatusStep.Call(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		if snap.Status.Terminal() {
			return decodeResult[any](world.Run{ID: r.ID, Status: snap.Status, Output: snap.Output, Error: snap.Error})
		}
		Sleep(ctx, delay)
	}
}

// resultPollMax caps the backoff of RunHandle.Result.
const resultPollMax = 5 * time.Minute

// Cancel cancels the run (see Run.Cancel).
func (r *RunHandle) Cancel(ctx Context, reason string) error {
	_, err := cancelRunStep.Call(ctx, cancelRequest{RunID: r.ID, Reason: reason})
	return err
}
