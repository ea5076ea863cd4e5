package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// deadLetters lists the messages the queue set aside after they failed
// too many deliveries: each is a run that no longer moves until it is
// redriven.
func deadLetters(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("dead-letters", env)
	limit := fs.Int("limit", 0, "at most this many dead letters (0: all)")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	if *limit < 0 {
		return fmt.Errorf("%w: --limit %d: want 0 or more", errUsage, *limit)
	}
	w, dl, err := openDeadLetters(ctx, wf)
	if err != nil {
		return err
	}
	defer w.Close()
	letters, err := dl.ListDeadLetters(ctx, *limit)
	if err != nil {
		return err
	}
	if len(letters) == 0 {
		fmt.Fprintln(env.out, "no dead letters: every message is on the queue or delivered")
		return nil
	}
	runs := runLookup{w: w, seen: map[string]world.Run{}}
	tw := tabwriter.NewWriter(env.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tWORKFLOW\tSTATUS\tRECEIVES\tSENT\tMESSAGE ID")
	for _, d := range letters {
		r, err := runs.get(ctx, d.RunID)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d×\t%s\t%s\n", orDash(d.RunID), orDash(r.Workflow), orDash(string(r.Status)),
			d.Receives, d.SentAt.Local().Format(time.DateTime), d.ID)
	}
	if len(letters) == *limit {
		fmt.Fprintln(tw, "… more may wait: raise --limit")
	}
	fmt.Fprintf(tw, "%d dead letters; workflow redrive puts them back on the queue\n", len(letters))
	return tw.Flush()
}

// redrive puts dead letters back on the queue, all of them or those of
// one run or one workflow: after the bug that made them fail is fixed.
func redrive(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("redrive", env)
	runID := fs.String("run", "", "only the dead letters of this run")
	workflowName := fs.String("workflow", "", "only the dead letters of runs of this workflow")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, dl, err := openDeadLetters(ctx, wf)
	if err != nil {
		return err
	}
	defer w.Close()
	runs := runLookup{w: w, seen: map[string]world.Run{}}
	var lookupErr error
	keep := func(d world.DeadLetter) bool {
		if *runID != "" && d.RunID != *runID {
			return false
		}
		if *workflowName == "" {
			return true
		}
		r, err := runs.get(ctx, d.RunID)
		lookupErr = errors.Join(lookupErr, err)
		return err == nil && r.Workflow == *workflowName
	}
	moved, err := dl.Redrive(ctx, keep)
	fmt.Fprintf(env.out, "redrove %d dead letters\n", moved)
	return errors.Join(err, lookupErr)
}

// openDeadLetters opens the World the flags name, if its queue
// dead-letters messages.
func openDeadLetters(ctx context.Context, wf *worldFlags) (world.World, world.DeadLetters, error) {
	w, err := wf.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	dl, ok := w.(world.DeadLetters)
	if !ok {
		w.Close()
		return nil, nil, fmt.Errorf("the %s World has no dead letters: its queue redelivers a failing message until it succeeds instead of setting it aside (workflow inspect runs shows the runs it belongs to)", wf.kind)
	}
	return w, dl, nil
}

// runLookup reads the runs of dead letters, each once. A dead letter
// whose run is gone (or that is not the World's message) gets a zero Run.
type runLookup struct {
	w    world.Store
	seen map[string]world.Run
}

func (l runLookup) get(ctx context.Context, id string) (world.Run, error) {
	if r, ok := l.seen[id]; ok || id == "" {
		return r, nil
	}
	r, err := l.w.GetRun(ctx, id)
	if err != nil && !errors.Is(err, world.ErrRunNotFound) {
		return world.Run{}, fmt.Errorf("run %s of a dead letter: %w", id, err)
	}
	l.seen[id] = r
	return r, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
