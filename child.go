package workflow

import (
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// ChildRun is a run started from inside a workflow with
// [Workflow.StartChild]. It is a [Future] of the child's result: Get waits
// (durably) for the child to end, woken by the child itself, not by
// polling. [ChildRun.Handle] gives the child's [RunHandle], to read its
// status or cancel it.
type ChildRun[O any] struct {
	*opFuture[O]
}

// StartChild starts a run of wf as a child of the calling workflow. The
// child carries the $parentRunId and $rootRunId attributes, and reports its
// result back to the parent when it ends. Of the [StartOption]s,
// WithRunID, WithIdempotencyKey and WithLimitKey apply to a child.
//
// A child counts under its workflow's limits ([WithConcurrency],
// [WithRateLimit]) like any run: beyond them it is queued, and a parent
// waiting for it waits as long. A parent must not wait for a child of a
// partition whose slots it or its own waiting ancestors hold, or they may
// wait for each other for ever (a workflow limited to 1 that waits for a
// child of itself under the same key).
func (w *Workflow[I, O]) StartChild(ctx Context, input I, opts ...StartOption) *ChildRun[O] {
	var cfg startConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.attributes != nil {
		return &ChildRun[O]{failedFuture[O](fmt.Errorf("workflow: StartChild of %q: WithAttributes applies to Start only", w.name))}
	}
	raw, err := marshal("child workflow input", input)
	if err != nil {
		return &ChildRun[O]{failedFuture[O](err)}
	}
	limit, err := startLimit(w.def, cfg)
	if err != nil {
		return &ChildRun[O]{failedFuture[O](err)}
	}
	runID := cfg.runID
	if runID == "" && cfg.key != "" {
		runID = engine.NewRunID(w.name, "", cfg.key)
	}
	op := ctx.engine().StartChild(w.name, raw, runID, limit, callSite())
	return &ChildRun[O]{&opFuture[O]{op: op, wrap: func(err error) error {
		var cancelled *RunCancelledError
		if errors.As(err, &cancelled) {
			return cancelled
		}
		return &RunFailedError{RunID: op.ChildRunID(), Err: err}
	}}}
}

// RunID waits until the child run exists and returns its ID.
func (c *ChildRun[O]) RunID(ctx Context) string {
	if c.op == nil {
		return ""
	}
	op := c.op
	ctx.engine().Block(op.Created)
	return op.ChildRunID()
}

// Handle waits until the child run exists and returns its handle.
func (c *ChildRun[O]) Handle(ctx Context) *RunHandle[O] { return RunHandleOf[O](c.RunID(ctx)) }
