package workflow

import "context"

// HookDef is a hook's type and validator, defined once and shared by the
// workflow that creates the hook and the code that resumes it.
//
//	var Approvals = workflow.DefineHook(func(a Approval) error { ... })
//	h := Approvals.Create(ctx, workflow.WithToken("approval:"+id)) // workflow
//	err := Approvals.Resume(ctx, client, "approval:"+id, a)                  // route
type HookDef[T any] struct {
	validate func(T) error
}

// DefineHook defines a hook carrying values of type T. validate, if not
// nil, vets every value: Resume refuses an invalid one before anything is
// written, and the workflow's Receive refuses one that got in another way
// (a plain ResumeHook). Both fail with an [*InvalidPayloadError].
func DefineHook[T any](validate func(T) error) *HookDef[T] {
	return &HookDef[T]{validate: validate}
}

// Create creates the hook in the calling workflow.
func (d *HookDef[T]) Create(ctx Context, opts ...HookOption) *Hook[T] {
	return &Hook[T]{hookCore: createHook(ctx, hookOptions(kindPlain, opts), callSite()), validate: d.validate}
}

// Validate reports whether the definition accepts v.
func (d *HookDef[T]) Validate(v T) error { return checkPayload(d.validate, v) }

// Resume validates payload, then sends it to the hook holding token (see
// ResumeHook). An invalid payload is not written anywhere.
func (d *HookDef[T]) Resume(ctx context.Context, c *Client, token string, payload T) error {
	if err := d.Validate(payload); err != nil {
		return err
	}
	return ResumeHook(ctx, c, token, payload)
}

// RespondingHookDef is a responding hook's message and reply types,
// defined once and shared by the workflow and its callers.
type RespondingHookDef[M, R any] struct{}

// DefineRespondingHook defines a responding hook taking messages of type M
// and replying with an R.
func DefineRespondingHook[M, R any]() *RespondingHookDef[M, R] { return &RespondingHookDef[M, R]{} }

// Create creates the hook in the calling workflow.
func (d *RespondingHookDef[M, R]) Create(ctx Context, opts ...HookOption) *RespondingHook[M, R] {
	return newRespondingHook[M, R](ctx, hookOptions(kindResponding, opts), callSite())
}

// Resume sends msg to the hook holding token and waits for its reply (see
// ResumeRespondingHook).
func (d *RespondingHookDef[M, R]) Resume(ctx context.Context, c *Client, token string, msg M, opts ...ResumeOption) (R, error) {
	return ResumeRespondingHook[M, R](ctx, c, token, msg, opts...)
}
