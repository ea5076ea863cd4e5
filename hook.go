package workflow

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Hook errors, matched with errors.Is.
var (
	// ErrHookNotFound: no live hook has this token (never created, disposed,
	// or its run has ended).
	ErrHookNotFound = errors.New("workflow: hook not found")
	// ErrHookConflict: another run holds the token. HookConflictError says which.
	ErrHookConflict = errors.New("workflow: hook token is held by another run")
	// ErrHookForceClaimed: another run took the token over with Force.
	ErrHookForceClaimed = errors.New("workflow: hook token was force-claimed by another run")
	// ErrHookDisposed: Receive on a hook after Dispose.
	ErrHookDisposed = errors.New("workflow: hook disposed")
)

// HookConflictError says which run holds (or took) a hook's token.
type HookConflictError struct {
	Token      string
	OwnerRunID string
	Forced     bool // the owner took the token from this run with Force
}

func (e *HookConflictError) Error() string {
	if e.Forced {
		return fmt.Sprintf("hook %q was force-claimed by run %s", e.Token, e.OwnerRunID)
	}
	return fmt.Sprintf("hook %q is held by run %s", e.Token, e.OwnerRunID)
}

// Is matches ErrHookConflict or ErrHookForceClaimed.
func (e *HookConflictError) Is(target error) bool {
	return target == ErrHookConflict || (e.Forced && target == ErrHookForceClaimed)
}

// HookOptions configures CreateHook.
type HookOptions struct {
	// Token addresses the hook. Deterministic tokens ("approval:" + orderID)
	// let the resumer find the hook without being told; leave it empty for
	// a generated, unguessable one.
	Token string
	// Metadata is stored with the hook and readable by resumers.
	Metadata any
	// Force takes the token over from another run that holds it: that run's
	// Receive fails with ErrHookForceClaimed.
	Force bool
	// MinRetention keeps the token unavailable to other runs for at least
	// this long after the hook is created, even after this run ends, so a
	// duplicate request arriving late still collides.
	MinRetention time.Duration
}

// Hook receives values of type T sent from outside the run with ResumeHook.
// Waiting on it costs nothing: the run suspends until a value arrives.
type Hook[T any] struct {
	op *engine.Op
}

// CreateHook creates a hook in the calling workflow.
func CreateHook[T any](ctx Context, opts HookOptions) *Hook[T] {
	meta, err := marshal("hook metadata", opts.Metadata)
	if err != nil || opts.Metadata == nil {
		meta = nil
	}
	op := ctx.engine().CreateHook(engine.HookOptions{
		Token: opts.Token, Metadata: meta, Force: opts.Force, Retention: opts.MinRetention,
	}, callSite(0))
	return &Hook[T]{op: op}
}

// Token waits until the hook is registered and returns its token.
func (h *Hook[T]) Token(ctx Context) string {
	ctx.engine().Block(h.op.Created)
	return h.op.Name
}

// IsReady reports whether Receive would return at once.
func (h *Hook[T]) IsReady() bool { return h.op.HookReady() }

// Receive waits for the next value sent to the hook. It fails with a
// *HookConflictError if another run holds the token, and with
// ErrHookDisposed after Dispose.
func (h *Hook[T]) Receive(ctx Context) (T, error) {
	var v T
	msg, ok, owner, forcedBy := ctx.engine().NextHookMessage(h.op)
	switch {
	case owner != "":
		return v, &HookConflictError{Token: h.op.Name, OwnerRunID: owner}
	case forcedBy != "":
		return v, &HookConflictError{Token: h.op.Name, OwnerRunID: forcedBy, Forced: true}
	case !ok:
		return v, ErrHookDisposed
	}
	if err := decodeJSON(msg.Payload, &v); err != nil {
		return v, fmt.Errorf("hook %q: decoding payload into %T: %w", h.op.Name, v, err)
	}
	return v, nil
}

// Dispose releases the token so another run can claim it (after any
// MinRetention). A run's hooks are disposed when it ends; call Dispose to
// release one earlier. It is safe in a defer.
func (h *Hook[T]) Dispose(ctx Context) { ctx.engine().DisposeHook(h.op) }

// ResumeHook sends payload to the hook holding token and wakes its run. It
// returns once the payload is durably recorded in the run's log.
func ResumeHook[T any](ctx context.Context, c *Client, token string, payload T) error {
	raw, err := marshal("hook payload", payload)
	if err != nil {
		return err
	}
	h, err := c.world.GetHook(ctx, token)
	if errors.Is(err, world.ErrHookNotFound) || (err == nil && h.Disposed) {
		return fmt.Errorf("%w: %q", ErrHookNotFound, token)
	}
	if err != nil {
		return err
	}
	err = engine.Resume(ctx, c.world, h, "rs_"+rand.Text(), raw, c.now())
	if errors.Is(err, world.ErrRunFinished) || errors.Is(err, world.ErrRunNotFound) {
		return fmt.Errorf("%w: %q (its run has ended)", ErrHookNotFound, token)
	}
	return err
}
