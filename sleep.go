package workflow

import "time"

// Sleep suspends the workflow for d. The run costs nothing while it
// sleeps: its invocation ends and a durable timer wakes it, even days later
// and across restarts.
func Sleep(ctx Context, d time.Duration) {
	_, _ = after(ctx, d, callSite()).Get(ctx)
}

// After returns a Future that is ready once d has passed, to race a timer
// against other work with Select.
func After(ctx Context, d time.Duration) Future[struct{}] {
	return after(ctx, d, callSite())
}

func after(ctx Context, d time.Duration, site string) Future[struct{}] {
	return &opFuture[struct{}]{op: ctx.engine().Sleep(d, site)}
}
