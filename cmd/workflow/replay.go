package main

import (
	"context"
	"fmt"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
)

// replayRunning is the deploy gate: it replays every run in flight against
// the workflows compiled into this binary, the repository's example
// application's (examples/lambdaapp), and fails if any would break. An
// application's gate is a binary of its own: a few lines calling
// workflow.ReplayRunning with its registry (examples/gate).
func replayRunning(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("replay", env)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, err := wf.open(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	report, err := workflow.ReplayRunning(ctx, w, lambdaapp.Workflows, workflow.WithPayloadCodec(wf.codec))
	if err != nil {
		return err
	}
	if _, err := report.WriteTo(env.out); err != nil {
		return err
	}
	if len(report.Failures) > 0 {
		return fmt.Errorf("%d runs in flight would fail on this code", len(report.Failures))
	}
	return nil
}
