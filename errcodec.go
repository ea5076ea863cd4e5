package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Errors cross the step and run boundaries as JSON records. Known kinds
// revive as their own types; a registered error type revives as itself
// (errors.As works); a registered sentinel revives as the same value
// (errors.Is works); anything else becomes a RemoteError that keeps the
// type name, the message and the cause chain.

type errorRecord struct {
	Kind       string          `json:"kind,omitempty"`
	Type       string          `json:"type,omitempty"`
	Message    string          `json:"message"`
	Data       json.RawMessage `json:"data,omitempty"`
	Step       string          `json:"step,omitempty"`
	Attempts   int             `json:"attempts,omitempty"`
	RunID      string          `json:"runId,omitempty"`
	RetryAfter time.Duration   `json:"retryAfter,omitempty"`
	Stack      string          `json:"stack,omitempty"`
	Cause      *errorRecord    `json:"cause,omitempty"`
}

var registered = struct {
	sync.RWMutex
	sentinels map[string]error        // type + message → the value
	types     map[string]reflect.Type // type name → pointer type
}{sentinels: map[string]error{}, types: map[string]reflect.Type{}}

// RegisterError lets an error survive the trip through the log as itself.
// Register sentinels (var ErrOutOfStock = errors.New(...)) so errors.Is
// matches them, and error types with exported fields (pass a zero value,
// e.g. &DeclinedError{}) so errors.As finds them with their fields. Call it
// at init time in every process that runs or reads the workflows.
func RegisterError(err error) {
	registered.Lock()
	defer registered.Unlock()
	name := fmt.Sprintf("%T", err)
	registered.sentinels[name+"\x00"+err.Error()] = err
	if t := reflect.TypeOf(err); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && t.Elem().NumField() > 0 && exported(t.Elem()) {
		registered.types[name] = t
	}
}

// The package's own sentinels can reach workflow code from steps (a step
// that Responds, resumes a hook, ...) and end up in a run's error.
func init() {
	for _, err := range []error{
		ErrHookNotFound, ErrHookDisposed, ErrHookResponseNotSent, ErrNotRespondingHook,
		ErrAlreadyResponded, ErrNotInStep, ErrNoReplyChannel, ErrReplyRestarted, ErrNotWebhook,
	} {
		RegisterError(err)
	}
}

func exported(t reflect.Type) bool {
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			return false
		}
	}
	return true
}

func encodeError(err error) json.RawMessage {
	b, _ := json.Marshal(toRecord(err))
	return b
}

func toRecord(err error) *errorRecord {
	if err == nil {
		return nil
	}
	r := &errorRecord{Type: fmt.Sprintf("%T", err), Message: err.Error()}
	var cause error
	// One record per link of the chain: this link's own type, not the first
	// match anywhere in the chain, and its cause in the next record.
	switch e := err.(type) { //nolint:errorlint // see above
	case *FatalError:
		r.Kind, cause = "fatal", e.Err
	case *RetryableError:
		r.Kind, r.RetryAfter, cause = "retryable", e.RetryAfter, e.Err
	case *StepError:
		r.Kind, r.Step, r.Attempts, cause = "step", e.Step, e.Attempts, e.Err
	case *RunFailedError:
		r.Kind, r.RunID, cause = "run_failed", e.RunID, e.Err
	case *RunCancelledError:
		r.Kind, r.RunID, r.Data = "cancelled", e.RunID, mustMarshal(e.Reason)
	case *engine.Cancelled:
		r.Kind, r.RunID, r.Data = "cancelled", e.RunID, mustMarshal(e.Reason)
	case *HookConflictError:
		r.Kind, r.Data = "hook_conflict", mustMarshal(e)
	case *InvalidPayloadError:
		r.Kind, cause = "invalid_payload", e.Err
	case *RemoteError:
		// Passed on (a child's failure in its parent's): keep the original
		// type, not the stand-in's.
		r.Type, cause = e.Type, e.Err
	case *NondeterminismError:
		r.Kind, r.Data = "nondeterminism", mustMarshal(e)
	case *engine.Nondeterminism:
		return toRecord((*NondeterminismError)(e))
	case *PanicError:
		r.Kind, r.Data, r.Stack = "panic", mustMarshal(e.Value), e.Stack
	case *engine.PanicError:
		return toRecord((*PanicError)(e))
	default:
		if s, ok := sentinelOf(err); ok {
			r.Kind = s.kind
		} else if isRegisteredType(r.Type) {
			r.Kind, r.Data = "registered", mustMarshal(err)
		}
		cause = errors.Unwrap(err)
	}
	r.Cause = toRecord(cause)
	return r
}

// sentinels pairs the engine's sentinel errors with the root's that stand
// for them, under the kind a record gives them.
var sentinels = []sentinel{
	{"max_events", engine.ErrMaxEvents, ErrMaxEventsExceeded},
	{"stuck", engine.ErrStuck, ErrRunStuck},
	{"step_too_long", engine.ErrStepTooLong, ErrStepTooLong},
	{"interrupted", engine.ErrInterrupted, ErrAttemptInterrupted},
	{"heartbeat_timeout", engine.ErrHeartbeatTimeout, ErrHeartbeatTimeout},
}

// sentinelOf finds the sentinel err is (this link itself: a wrapper is a
// link of its own).
func sentinelOf(err error) (sentinel, bool) {
	for _, s := range sentinels {
		if err == s.engine || err == s.root { //nolint:errorlint // see above
			return s, true
		}
	}
	return sentinel{}, false
}

type sentinel struct {
	kind         string
	engine, root error
}

func isRegisteredType(name string) bool {
	registered.RLock()
	defer registered.RUnlock()
	_, ok := registered.types[name]
	return ok
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func decodeError(raw json.RawMessage) error {
	var r errorRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return &RemoteError{Type: "unknown", Message: string(raw)}
	}
	return fromRecord(&r)
}

func fromRecord(r *errorRecord) error {
	if r == nil {
		return nil
	}
	cause := fromRecord(r.Cause)
	switch r.Kind {
	case "fatal":
		return &FatalError{Err: causeOrMessage(cause, r)}
	case "retryable":
		return &RetryableError{Err: causeOrMessage(cause, r), RetryAfter: r.RetryAfter}
	case "step":
		return &StepError{Step: r.Step, Attempts: r.Attempts, Err: cause}
	case "run_failed":
		return &RunFailedError{RunID: r.RunID, Err: cause}
	case "cancelled":
		e := &RunCancelledError{RunID: r.RunID}
		_ = json.Unmarshal(r.Data, &e.Reason)
		return e
	case "hook_conflict":
		e := &HookConflictError{}
		if json.Unmarshal(r.Data, e) == nil {
			return e
		}
	case "invalid_payload":
		return &InvalidPayloadError{Err: causeOrMessage(cause, r)}
	case "nondeterminism":
		e := &NondeterminismError{}
		if json.Unmarshal(r.Data, e) == nil {
			return e
		}
	case "panic":
		e := &PanicError{Stack: r.Stack}
		_ = json.Unmarshal(r.Data, &e.Value)
		return e
	}
	for _, s := range sentinels {
		if s.kind == r.Kind {
			return s.root
		}
	}
	registered.RLock()
	sentinel, isSentinel := registered.sentinels[r.Type+"\x00"+r.Message]
	t, isType := registered.types[r.Type]
	registered.RUnlock()
	if r.Kind == "registered" && isType {
		v := reflect.New(t.Elem())
		if json.Unmarshal(r.Data, v.Interface()) == nil {
			if err, ok := v.Interface().(error); ok {
				return err
			}
		}
	}
	if isSentinel {
		return sentinel
	}
	return &RemoteError{Type: r.Type, Message: r.Message, Err: cause}
}

// causeOrMessage is the cause of an error that only wraps one. A record
// without it (hand-edited, or written by a buggy writer) keeps its message
// as the cause, since these types' Error methods report their cause's.
func causeOrMessage(cause error, r *errorRecord) error {
	if cause == nil {
		return errors.New(r.Message)
	}
	return cause
}

// codec is the engine's view of the error model.
type codec struct{}

func (codec) Encode(err error) json.RawMessage { return encodeError(err) }

func (codec) Decode(raw json.RawMessage) error { return decodeError(raw) }

func (codec) Retry(err error) (bool, time.Duration) {
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
