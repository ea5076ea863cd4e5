package agent

import (
	"context"

	"github.com/lambdaworkflow/workflow"
)

// openCall opens the parts of one call in the run's stream under
// namespace: it writes the call's start part, which a retried attempt
// repeats so a client drops the failed attempt's parts, and returns the
// function that writes the call's later parts.
func openCall(ctx context.Context, namespace, call string, attempt int) (func(Part) error, error) {
	w, err := workflow.Writer[Part](ctx, namespace)
	if err != nil {
		return nil, err
	}
	emit := func(p Part) error {
		p.Call = call
		return w.Write(p)
	}
	if err := emit(Part{Type: PartStart, Attempt: attempt}); err != nil {
		return nil, err
	}
	return emit, nil
}
