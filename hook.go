package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Hook errors, matched with errors.Is.
var (
	// ErrHookNotFound: no live hook has this token (never created, disposed,
	// or its run has ended).
	ErrHookNotFound = world.ErrHookNotFound
	// ErrHookConflict: another run holds the token. HookConflictError says which.
	ErrHookConflict = errors.New("workflow: hook token is held by another run")
	// ErrHookForceClaimed: another run took the token over with [WithForceClaim].
	ErrHookForceClaimed = errors.New("workflow: hook token was force-claimed by another run")
	// ErrHookDisposed: Receive on a hook after Dispose.
	ErrHookDisposed = errors.New("workflow: hook disposed")
	// ErrInvalidPayload matches every InvalidPayloadError.
	ErrInvalidPayload = errors.New("workflow: invalid hook payload")
)

// HookConflictError says which run holds (or took) a hook's token.
type HookConflictError struct {
	Token      string
	OwnerRunID string
	Forced     bool // the owner took the token from this run with WithForceClaim
}

func (e *HookConflictError) Error() string {
	if e.Forced {
		return fmt.Sprintf("hook %q was force-claimed by run %s", e.Token, e.OwnerRunID)
	}
	return fmt.Sprintf("hook %q is held by run %s", e.Token, e.OwnerRunID)
}

// Is matches [ErrHookConflict] or [ErrHookForceClaimed].
func (e *HookConflictError) Is(target error) bool {
	return target == ErrHookConflict || (e.Forced && target == ErrHookForceClaimed)
}

// InvalidPayloadError is a payload its hook definition's validator
// refused (see DefineHook); Err is the validator's error.
type InvalidPayloadError struct{ Err error }

func (e *InvalidPayloadError) Error() string {
	return "workflow: invalid hook payload: " + e.Err.Error()
}
func (e *InvalidPayloadError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, [ErrInvalidPayload]) true.
func (e *InvalidPayloadError) Is(target error) bool { return target == ErrInvalidPayload }

// The kinds of hook, as the World records them: whether a hook replies to
// its resumer, and whether it is reachable over public HTTP.
const (
	kindPlain      = ""
	kindResponding = "responding"
	kindWebhook    = "webhook"
)

// hookCore is what every kind of hook shares: the durable operation behind
// it. Hook, RespondingHook and Webhook add their message types on top.
type hookCore struct {
	op *engine.Op
}

// createHook issues a hook.
func createHook(ctx Context, o engine.HookOptions, site string) hookCore {
	return hookCore{op: ctx.engine().CreateHook(o, site)}
}

// hookOptions is what the engine needs to create a plain or a responding
// hook.
func hookOptions(kind string, opts []HookOption) engine.HookOptions {
	c := newHookConfig(opts)
	return engine.HookOptions{
		Token: c.token, Kind: kind, Metadata: encodeMetadata(c.metadata),
		Force: c.force, Retention: c.retention, Replies: kind == kindResponding,
	}
}

// encodeMetadata encodes a hook's metadata (WithMetadata). A value that
// cannot be encoded is a bug in the workflow: it panics, which fails the
// run with the call site in its stack.
func encodeMetadata(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("workflow: encoding hook metadata %T: %v", v, err))
	}
	return b
}

// Token waits until the hook is registered and returns its token.
func (h hookCore) Token(ctx Context) string {
	ctx.engine().Block(h.op.Created)
	return h.op.Name
}

// IsReady reports whether Receive would return at once.
func (h hookCore) IsReady() bool { return h.op.HookReady() }

// Dispose releases the token so another run can claim it (after any
// MinRetention). A run's hooks are disposed when it ends; call Dispose to
// release one earlier. It is safe in a defer.
func (h hookCore) Dispose(ctx Context) { ctx.engine().DisposeHook(h.op) }

// next waits for the hook's next message. It fails with a
// [*HookConflictError] if another run holds or took the token, and with
// ErrHookDisposed after Dispose.
func (h hookCore) next(ctx Context) (engine.HookMessage, error) {
	msg, ok, owner, forcedBy := ctx.engine().NextHookMessage(h.op)
	switch {
	case owner != "":
		return msg, &HookConflictError{Token: h.op.Name, OwnerRunID: owner}
	case forcedBy != "":
		return msg, &HookConflictError{Token: h.op.Name, OwnerRunID: forcedBy, Forced: true}
	case !ok:
		return msg, ErrHookDisposed
	}
	return msg, nil
}

// receive waits for the next message and decodes it into what the hook
// yields.
func receive[V any](ctx Context, h hookCore, decode func(engine.HookMessage) (V, error)) (V, error) {
	msg, err := h.next(ctx)
	if err != nil {
		var zero V
		return zero, err
	}
	return decode(msg)
}

// all iterates over a hook's messages. It ends quietly once the hook is
// disposed, yields a conflict or takeover as its last error, and yields a
// message that fails to decode or validate as an error without ending.
func all[V any](ctx Context, h hookCore, decode func(engine.HookMessage) (V, error)) iter.Seq2[V, error] {
	return func(yield func(V, error) bool) {
		for {
			msg, err := h.next(ctx)
			if errors.Is(err, ErrHookDisposed) {
				return
			}
			if err != nil {
				var zero V
				yield(zero, err)
				return
			}
			if !yield(decode(msg)) {
				return
			}
		}
	}
}

// Hook receives values of type T sent from outside the run with ResumeHook.
// Waiting on it costs nothing: the run suspends until a value arrives.
type Hook[T any] struct {
	hookCore
	validate func(T) error
}

// CreateHook creates a hook in the calling workflow.
func CreateHook[T any](ctx Context, opts ...HookOption) *Hook[T] {
	return &Hook[T]{hookCore: createHook(ctx, hookOptions(kindPlain, opts), callSite())}
}

// Receive waits for the next value sent to the hook. It fails with a
// [*HookConflictError] if another run holds the token or took it over, with
// ErrHookDisposed after Dispose, and with an [*InvalidPayloadError] for a
// value the hook's definition refuses.
func (h *Hook[T]) Receive(ctx Context) (T, error) { return receive(ctx, h.hookCore, h.decode) }

// All iterates over the values sent to the hook, as they arrive:
//
//	for v, err := range hook.All(ctx) { ... }
//
// The loop ends when the hook is disposed (call Dispose in the body to
// stop taking values). A conflict or takeover is yielded as the last
// error; a value that does not decode or validate is yielded as an error
// and the loop goes on if the body continues.
func (h *Hook[T]) All(ctx Context) iter.Seq2[T, error] { return all(ctx, h.hookCore, h.decode) }

func (h *Hook[T]) decode(msg engine.HookMessage) (T, error) {
	var v T
	if err := decodeJSON(msg.Payload, &v); err != nil {
		return v, fmt.Errorf("workflow: hook %q: decoding payload into %T: %w", h.op.Name, v, err)
	}
	return v, checkPayload(h.validate, v)
}

// checkPayload runs a hook definition's validator, if there is one.
func checkPayload[T any](validate func(T) error, v T) error {
	if validate == nil {
		return nil
	}
	if err := validate(v); err != nil {
		return &InvalidPayloadError{Err: err}
	}
	return nil
}
