package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

func cancel(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("cancel", env)
	reason := fs.String("reason", "", "why the runs are cancelled (recorded in their logs)")
	all := fs.Bool("all", false, "cancel every unfinished run the filters select, instead of one run")
	yes := fs.Bool("yes", false, "with --all: do not ask for confirmation")
	filters := registerRunFilters(fs)
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *all && len(rest) > 0:
		return fmt.Errorf("%w: cancel takes a run ID or --all, not both", errUsage)
	case !*all && len(rest) != 1:
		return fmt.Errorf("%w: cancel wants one run ID, or --all with filters", errUsage)
	case !*all && filters.any():
		return fmt.Errorf("%w: filters select runs for --all; cancel of one run takes none", errUsage)
	}
	w, err := wf.open(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	c := workflow.NewClient(w)
	if !*all {
		if err := cancelRun(ctx, c, rest[0], *reason); err != nil {
			return err
		}
		fmt.Fprintf(env.out, "cancelled %s\n", rest[0])
		return nil
	}
	ids, err := unfinished(ctx, w, filters)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fmt.Fprintln(env.out, "no unfinished run matches")
		return nil
	}
	if !*yes && !confirm(env, fmt.Sprintf("cancel %d runs (%s … %s)?", len(ids), ids[0], ids[len(ids)-1])) {
		return errors.New("not confirmed: nothing cancelled (--yes skips the question)")
	}
	var failed []error
	for _, id := range ids {
		// A run that finished since it was listed is no failure.
		if err := cancelRun(ctx, c, id, *reason); err != nil && !errors.Is(err, workflow.ErrRunFinished) {
			failed = append(failed, fmt.Errorf("%s: %w", id, err))
			continue
		}
		fmt.Fprintf(env.out, "cancelled %s\n", id)
	}
	return errors.Join(failed...)
}

func cancelRun(ctx context.Context, c *workflow.Client, id, reason string) error {
	run, err := workflow.GetRun[any](ctx, c, id)
	if err != nil {
		return err
	}
	return run.Cancel(ctx, reason)
}

// unfinished lists the IDs of the selected runs that have not finished,
// all of them before any is cancelled, so that cancelling does not move
// the listing under its own cursor.
func unfinished(ctx context.Context, w world.Store, filters *runFilters) ([]string, error) {
	var ids []string
	for r, err := range filters.runs(ctx, w) {
		if err != nil {
			return nil, err
		}
		if !r.Status.Terminal() {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// confirm asks a yes/no question; anything but y or yes is no.
func confirm(env *env, question string) bool {
	fmt.Fprintf(env.out, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(env.in).ReadString('\n')
	fmt.Fprintln(env.out)
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}
