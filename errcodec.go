package workflow

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/errcodec"
)

// Errors cross the step and run boundaries as JSON records (package
// internal/errcodec): the package's error types revive as themselves, its
// sentinels as the same values, and so do the errors users register.

// RegisterError lets an error survive the trip through the log as itself.
// Register sentinels (var ErrOutOfStock = errors.New(...)) so errors.Is
// matches them, and error types with exported fields (pass a zero value,
// e.g. &DeclinedError{}) so errors.As finds them with their fields. Call it
// at init time in every process that runs or reads the workflows.
func RegisterError(err error) { errcodec.Register(err) }

// The package's own sentinels can reach workflow code from steps (a step
// that Responds, resumes a hook, cancels a run, ...) and end up in a run's
// error.
func init() {
	for _, err := range []error{
		ErrHookNotFound, ErrHookDisposed, ErrHookResponseNotSent, ErrNotRespondingHook,
		ErrAlreadyResponded, ErrNotInStep, ErrNoReplyChannel, ErrReplyRestarted, ErrNotWebhook,
		ErrRunNotFound, ErrRunFinished, ErrStreamClosed,
	} {
		RegisterError(err)
	}
}

func encodeError(err error) json.RawMessage { return errorModel.Encode(err) }

func decodeError(raw json.RawMessage) error { return errorModel.Decode(raw) }

// errorModel is the codec with the package's error kinds.
var errorModel = errorCodec{&errcodec.Codec{
	Kinds: []errcodec.Kind{
		errcodec.Of("fatal", func(e *FatalError, _ *errcodec.Record) error { return e.Err },
			func(r *errcodec.Record, cause error) error {
				return &FatalError{Err: errcodec.CauseOrMessage(cause, r)}
			}),
		errcodec.Of("retryable", func(e *RetryableError, r *errcodec.Record) error { r.RetryAfter = e.RetryAfter; return e.Err },
			func(r *errcodec.Record, cause error) error {
				return &RetryableError{Err: errcodec.CauseOrMessage(cause, r), RetryAfter: r.RetryAfter}
			}),
		errcodec.Of("step", func(e *StepError, r *errcodec.Record) error { r.Step, r.Attempts = e.Step, e.Attempts; return e.Err },
			func(r *errcodec.Record, cause error) error {
				return &StepError{Step: r.Step, Attempts: r.Attempts, Err: cause}
			}),
		errcodec.Of("run_failed", func(e *RunFailedError, r *errcodec.Record) error { r.RunID = e.RunID; return e.Err },
			func(r *errcodec.Record, cause error) error { return &RunFailedError{RunID: r.RunID, Err: cause} }),
		errcodec.Of("cancelled", func(e *RunCancelledError, r *errcodec.Record) error {
			r.RunID, r.Data = e.RunID, errcodec.Marshal(e.Reason)
			return nil
		}, func(r *errcodec.Record, _ error) error {
			e := &RunCancelledError{RunID: r.RunID}
			_ = json.Unmarshal(r.Data, &e.Reason)
			return e
		}),
		errcodec.Of("hook_conflict", func(e *HookConflictError, r *errcodec.Record) error { r.Data = errcodec.Marshal(e); return nil },
			decodeData[HookConflictError]),
		errcodec.Of("invalid_payload", func(e *InvalidPayloadError, _ *errcodec.Record) error { return e.Err },
			func(r *errcodec.Record, cause error) error {
				return &InvalidPayloadError{Err: errcodec.CauseOrMessage(cause, r)}
			}),
		errcodec.Of("nondeterminism", func(e *NondeterminismError, r *errcodec.Record) error { r.Data = errcodec.Marshal(e); return nil },
			decodeData[NondeterminismError]),
		errcodec.Of("panic", func(e *PanicError, r *errcodec.Record) error {
			r.Data, r.Stack = errcodec.Marshal(e.Value), e.Stack
			return nil
		}, func(r *errcodec.Record, _ error) error {
			e := &PanicError{Stack: r.Stack}
			_ = json.Unmarshal(r.Data, &e.Value)
			return e
		}),
		// A stand-in passed on (a child's failure in its parent's) keeps
		// the original type, not its own.
		errcodec.Of("", func(e *RemoteError, r *errcodec.Record) error { r.Type = e.Type; return e.Err }, nil),
		errcodec.Sentinel("max_events", ErrMaxEventsExceeded),
		errcodec.Sentinel("stuck", ErrRunStuck),
		errcodec.Sentinel("step_too_long", ErrStepTooLong),
		errcodec.Sentinel("interrupted", ErrAttemptInterrupted),
		errcodec.Sentinel("heartbeat_timeout", ErrHeartbeatTimeout),
	},
	Convert: userError,
	Remote: func(typ, message string, cause error) error {
		return &RemoteError{Type: typ, Message: message, Err: cause}
	},
}}

// userError is the type users match for one the engine made.
func userError(err error) error {
	switch e := err.(type) { //nolint:errorlint // this link's own type
	case *engine.Cancelled:
		return &RunCancelledError{RunID: e.RunID, Reason: e.Reason}
	case *engine.Nondeterminism:
		return (*NondeterminismError)(e)
	case *engine.PanicError:
		return (*PanicError)(e)
	}
	return err
}

// decodeData revives an error type whose record keeps it whole in Data.
func decodeData[E any, P interface {
	*E
	error
}](r *errcodec.Record, _ error) error {
	e := P(new(E))
	if json.Unmarshal(r.Data, e) != nil {
		return nil
	}
	return e
}

// errorCodec is the engine's view of the error model: the codec, and
// which step failures are retried.
type errorCodec struct{ *errcodec.Codec }

func (errorCodec) Retry(err error) (bool, time.Duration) {
	var fatal *FatalError
	if errors.As(err, &fatal) {
		return false, 0
	}
	var retryable *RetryableError
	if errors.As(err, &retryable) {
		return true, retryable.RetryAfter
	}
	return true, 0
}
