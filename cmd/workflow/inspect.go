package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/timeline"
	"github.com/lambdaworkflow/workflow/world"
)

func inspectRuns(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("inspect runs", env)
	filters := registerRunFilters(fs)
	limit := fs.Int("limit", 50, "at most this many runs")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, err := wf.open(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	tw := tabwriter.NewWriter(env.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tWORKFLOW\tSTATUS\tCREATED\tUPDATED\tEVENTS\tATTRIBUTES")
	n := 0
	for r, err := range filters.runs(ctx, w) {
		if err != nil {
			return err
		}
		if n == *limit {
			fmt.Fprintf(tw, "… more runs: raise --limit\n")
			break
		}
		n++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Workflow, r.Status, r.CreatedAt.Local().Format(time.DateTime),
			r.UpdatedAt.Local().Format(time.DateTime), r.LastSlot, formatAttrs(r.Attributes))
	}
	return tw.Flush()
}

func inspectRun(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("inspect run", env)
	asJSON := fs.Bool("json", false, "print the run's event log as JSON, as workflow.Replay reads it")
	follow := fs.Bool("follow", false, "keep printing the run's events as they are written, until it ends")
	full := fs.Bool("full", false, "print payloads whole instead of shortened")
	id, err := oneRunID(fs, args)
	if err != nil {
		return err
	}
	if *asJSON && *follow {
		return fmt.Errorf("%w: --json prints a whole log; it does not --follow", errUsage)
	}
	w, err := wf.open(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	r, err := w.GetRun(ctx, id)
	if err != nil {
		return err
	}
	events, err := w.Events(ctx, r.ID, 0)
	if err != nil {
		return err
	}
	r, events, unreadable := engine.ForReading(ctx, wf.codec, r, events)
	if *asJSON {
		if unreadable != nil {
			return unreadable // a log to replay, not one with holes
		}
		return timeline.WriteJSON(env.out, events)
	}
	fmt.Fprintf(env.out, "run       %s\nworkflow  %s\nstatus    %s\ncreated   %s\n", r.ID, r.Workflow, r.Status, r.CreatedAt.Local().Format(time.RFC3339Nano))
	if d := r.Attributes[engine.AttrDeployment]; d != "" {
		fmt.Fprintf(env.out, "pinned to %s\n", d)
	}
	if len(r.Attributes) > 0 {
		fmt.Fprintf(env.out, "attrs     %s\n", formatAttrs(r.Attributes))
	}
	if r.Status == world.StatusQueued && len(events) > 0 {
		printQueuePosition(ctx, env.out, w, wf.codec, r, events[0])
	}
	noteUnreadable(env, unreadable)
	printSource(env, r)
	fmt.Fprintf(env.out, "\n%5s  %10s  %-15s %-5s %s\n", "SLOT", "AT", "EVENT", "CALL", "PAYLOAD")
	tl := timeline.Renderer{Full: *full}
	if err := tl.Write(env.out, events); err != nil {
		return err
	}
	if *follow {
		if r, err = followRun(ctx, w, wf.codec, r, events, &tl, env); err != nil {
			return err
		}
	}
	switch {
	case r.Status == world.StatusContinued: // its Output names the run that carries on
		fmt.Fprintf(env.out, "\nsuccessor %s\n", r.Output)
	case len(r.Output) > 0:
		fmt.Fprintf(env.out, "\noutput    %s\n", r.Output)
	}
	if len(r.Error) > 0 {
		fmt.Fprintf(env.out, "\nerror     %s\n", r.Error)
	}
	return nil
}

// followRun prints the run's new events as they are written until the
// run ends (or ctx is done: Ctrl-C), and returns the run as it ended. It
// waits the way every waiter does: woken by a Notifier, else polling at a
// pace that backs off.
func followRun(ctx context.Context, w world.World, c *codec.Chain, r world.Run, seen []world.Event, tl *timeline.Renderer, env *env) (world.Run, error) {
	after := int64(0)
	if len(seen) > 0 {
		after = seen[len(seen)-1].Slot
	}
	pace := world.NewPace(1)
	for !r.Status.Terminal() {
		if err := pace.WaitEvents(ctx, w, r.ID, after); err != nil {
			if errors.Is(err, context.Canceled) {
				return r, nil
			}
			return r, err
		}
		events, err := w.Events(ctx, r.ID, after)
		if err != nil {
			return r, err
		}
		if len(events) == 0 {
			continue
		}
		pace.Progress()
		_, events, _ = engine.ForReading(ctx, c, r, events)
		if err := tl.Write(env.out, events); err != nil {
			return r, err
		}
		after = events[len(events)-1].Slot
		if r, err = w.GetRun(ctx, r.ID); err != nil {
			return r, err
		}
		r, _, _ = engine.ForReading(ctx, c, r, nil)
		if r.Status.Terminal() {
			// It may have ended between the two reads: its last events
			// come after those just printed.
			rest, err := w.Events(ctx, r.ID, after)
			if err != nil {
				return r, err
			}
			_, rest, _ = engine.ForReading(ctx, c, r, rest)
			if err := tl.Write(env.out, rest); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// printSource prints a dynamic run's stored code with its line numbers,
// which its errors cite, and the steps its aliases call.
func printSource(env *env, r world.Run) {
	in, ok, err := dynsource.Of(r.Workflow, r.Input)
	switch {
	case !ok:
	case err != nil:
		fmt.Fprintf(env.out, "source    unreadable: %v\n", err)
	default:
		fmt.Fprintf(env.out, "source    sha256:%s  steps: %s\n%s", in.Source.SHA256, in.Source.Bindings(), in.Source.Numbered())
	}
}
