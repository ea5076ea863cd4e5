package workflow

import (
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// FatalError marks a step error that must not be retried. Create it with
// Fatal. It survives the trip through the log: errors.As finds it in the
// error a workflow gets from the step and in a failed run's error.
type FatalError struct{ Err error }

// Fatal wraps err so the step fails at once instead of retrying.
func Fatal(err error) error { return &FatalError{Err: err} }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// RetryableError asks for a retry after a given delay (e.g. a rate limit's
// Retry-After) instead of the step's backoff. Create it with Retryable.
type RetryableError struct {
	Err        error
	RetryAfter time.Duration
}

// Retryable wraps err so the step is retried after d.
func Retryable(err error, after time.Duration) error {
	return &RetryableError{Err: err, RetryAfter: after}
}

func (e *RetryableError) Error() string { return e.Err.Error() }
func (e *RetryableError) Unwrap() error { return e.Err }

// StepError is what a workflow gets from a step that failed for good.
type StepError struct {
	Step     string
	Attempts int
	Err      error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %q failed after %d attempt(s): %v", e.Step, e.Attempts, e.Err)
}
func (e *StepError) Unwrap() error { return e.Err }

// Errors matched with errors.Is.
var (
	// ErrRunFailed matches every RunFailedError.
	ErrRunFailed = errors.New("workflow: run failed")
	// ErrRunCancelled matches every RunCancelledError.
	ErrRunCancelled = errors.New("workflow: run cancelled")
	// ErrMaxEventsExceeded is the cause of a run that hit its event limit.
	// Split unbounded loops into child runs.
	ErrMaxEventsExceeded = engine.ErrMaxEvents
	// ErrUnknownWorkflow: a worker got a run of a workflow its registry
	// does not hold. The run is left for a worker that holds it.
	ErrUnknownWorkflow = engine.ErrUnknownWorkflow
	// ErrPinnedElsewhere matches every PinnedError.
	ErrPinnedElsewhere = errors.New("workflow: the run is pinned to another deployment")
	// ErrRunNotFound is returned for an unknown run ID. It is the World's
	// error: errors.Is matches it whichever package a caller names.
	ErrRunNotFound = world.ErrRunNotFound
	// ErrRunFinished: the run has already ended, e.g. cancelling it again.
	ErrRunFinished = world.ErrRunFinished
)

// RunFailedError is the error of a run that failed; Err is what failed it,
// with its kind and cause chain, so errors.Is/As see through it.
type RunFailedError struct {
	RunID string
	Err   error
}

func (e *RunFailedError) Error() string { return fmt.Sprintf("run %s failed: %v", e.RunID, e.Err) }
func (e *RunFailedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, [ErrRunFailed]) true.
func (e *RunFailedError) Is(target error) bool { return target == ErrRunFailed }

// RunCancelledError is the error of a cancelled run.
type RunCancelledError struct {
	RunID  string
	Reason string
}

func (e *RunCancelledError) Error() string {
	return (&engine.Cancelled{RunID: e.RunID, Reason: e.Reason}).Error()
}

// Is makes errors.Is(err, [ErrRunCancelled]) true.
func (e *RunCancelledError) Is(target error) bool { return target == ErrRunCancelled }

// NondeterminismError fails a run whose workflow code no longer makes the
// durable calls its log recorded: it names the log position, what the log
// holds, and what the code did instead, with its file and line. It
// survives the log: errors.As finds it, fields and all, in a failed run's
// error.
type NondeterminismError struct {
	RunID    string
	Slot     int64  // the log position that disagrees
	Expected string // the call the log recorded there
	Found    string // what the workflow did instead, with its file:line
}

func (e *NondeterminismError) Error() string {
	return fmt.Sprintf("nondeterministic workflow: run %s, event %d: the log records %s, but the workflow %s",
		e.RunID, e.Slot, e.Expected, e.Found)
}

// PanicError is a panic recovered from a step: the panic's value, printed,
// and the goroutine's stack where it happened.
type PanicError struct {
	Value string
	Stack string
}

func (e *PanicError) Error() string { return "panic: " + e.Value }

// RemoteError stands for an error whose Go type is not registered with
// RegisterError: it keeps the original type name, message and cause chain.
type RemoteError struct {
	Type    string // the original Go type, e.g. "*net.OpError"
	Message string
	Err     error // the original's cause, if it had one
}

func (e *RemoteError) Error() string { return e.Message }
func (e *RemoteError) Unwrap() error { return e.Err }

// PinnedError is what [Worker.Process] returns for a run pinned to another
// deployment than the worker's: the worker did not touch it. An adapter
// hands the message to that deployment, or puts it back on the queue.
type PinnedError struct {
	RunID      string
	Deployment string // the deployment that must drive the run
}

func (e *PinnedError) Error() string {
	return fmt.Sprintf("workflow: run %s is pinned to deployment %s", e.RunID, e.Deployment)
}

// Is makes a PinnedError match [ErrPinnedElsewhere].
func (e *PinnedError) Is(target error) bool { return target == ErrPinnedElsewhere }
