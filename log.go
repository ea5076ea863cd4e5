package workflow

import (
	"context"
	"log/slog"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Logger returns the logger for workflow code: the worker's
// (WorkerOptions.Logger), with run_id and workflow on every line. It is
// silent while the workflow re-executes what it did in an earlier
// invocation, so a line is written once per real event, not once per
// replay; only a crash before the event was recorded can repeat it.
func Logger(ctx Context) *slog.Logger { return ctx.engine().Logger() }

// StepLogger returns the logger for a step: the worker's, with run_id,
// workflow, step, step_id and attempt on every line. ctx is the step's
// context; outside a step it returns slog.Default().
func StepLogger(ctx context.Context) *slog.Logger {
	if info, ok := engine.StepInfoFrom(ctx); ok && info.Logger != nil {
		return info.Logger
	}
	return slog.Default()
}
