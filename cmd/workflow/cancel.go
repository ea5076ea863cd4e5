package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/local"
)

func cancel(ctx context.Context, args []string, out io.Writer) error {
	fs, dir := newFlags("cancel")
	reason := fs.String("reason", "", "why the run is cancelled (recorded in its log)")
	id, err := oneRunID(fs, args)
	if err != nil {
		return err
	}
	w, err := local.Open(*dir)
	if err != nil {
		return err
	}
	defer w.Close()
	run, err := workflow.GetRun[any](ctx, workflow.NewClient(w), id)
	if err != nil {
		return err
	}
	if err := run.Cancel(ctx, *reason); err != nil {
		return err
	}
	fmt.Fprintf(out, "cancelled %s\n", run.ID)
	return nil
}
