package workflow

// Conflict returns the ID of the run that holds the hook's token instead
// of this one: the run that held it when this run tried to claim it, or
// the run that took it over since with [WithForceClaim]. It returns ""
// while this run owns the token. The classic use is run idempotency: a
// duplicate run finds the original through a deterministic token and
// waits for its result.
//
//	h := workflow.CreateHook[struct{}](ctx, workflow.WithToken("order:"+id))
//	if original := h.Conflict(ctx); original != "" {
//		return workflow.RunHandleOf[Receipt](original).Result(ctx)
//	}
func (h hookCore) Conflict(ctx Context) string { return ctx.engine().HookOwner(h.op) }
