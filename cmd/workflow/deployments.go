package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// notStarted stands for the deployment of runs no worker has executed
// yet: whichever deployment takes them first pins them.
const notStarted = "(not started)"

// deployments counts the runs still running on each deployment: a
// deployment (on Lambda, a published version of the flow function) with
// none left may be deleted, since no run will be handed to it.
func deployments(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("deployments", env)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, err := wf.open(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	running := map[string]int{}
	for _, status := range []world.RunStatus{world.StatusRunning, world.StatusPending} {
		f := runFilters{status: statusFlag(status)}
		for r, err := range f.runs(ctx, w) {
			if err != nil {
				return err
			}
			running[cmp.Or(r.Attributes[engine.AttrDeployment], notStarted)]++
		}
	}
	tw := tabwriter.NewWriter(env.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEPLOYMENT\tRUNS IN FLIGHT")
	for _, d := range slices.Sorted(maps.Keys(running)) {
		fmt.Fprintf(tw, "%s\t%d\n", d, running[d])
	}
	if len(running) == 0 {
		fmt.Fprintln(tw, "no runs in flight: every deployment but the newest may be deleted")
	}
	return tw.Flush()
}
