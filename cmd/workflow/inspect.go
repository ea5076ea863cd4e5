package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lambdaworkflow/workflow/internal/timeline"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

type attrFlags map[string]string

func (a attrFlags) String() string { return fmt.Sprint(map[string]string(a)) }

func (a attrFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("--attr wants key=value, got %q", v)
	}
	a[k] = val
	return nil
}

func inspectRuns(ctx context.Context, args []string, out io.Writer) error {
	fs, dir := newFlags("inspect runs")
	status := fs.String("status", "", "only runs in this status (pending, running, completed, failed, cancelled)")
	name := fs.String("workflow", "", "only runs of this workflow")
	limit := fs.Int("limit", 50, "at most this many runs")
	attrs := attrFlags{}
	fs.Var(attrs, "attr", "only runs with this attribute (key=value), repeatable")
	if rest, err := parse(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected %q", errUsage, rest[0])
	}
	w, err := local.Open(*dir)
	if err != nil {
		return err
	}
	defer w.Close()
	page, err := w.ListRuns(ctx, world.RunFilter{Workflow: *name, Status: world.RunStatus(*status), Attributes: attrs, Limit: *limit})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tWORKFLOW\tSTATUS\tCREATED\tEVENTS\tATTRIBUTES")
	for _, r := range page.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Workflow, r.Status, r.CreatedAt.Local().Format(time.DateTime), r.LastSlot, formatAttrs(r.Attributes))
	}
	if page.NextCursor != "" {
		fmt.Fprintf(tw, "… more runs: raise --limit\n")
	}
	return tw.Flush()
}

func inspectRun(ctx context.Context, args []string, out io.Writer) error {
	fs, dir := newFlags("inspect run")
	asJSON := fs.Bool("json", false, "print the run's event log as JSON, as workflow.Replay reads it")
	id, err := oneRunID(fs, args)
	if err != nil {
		return err
	}
	w, err := local.Open(*dir)
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
	if *asJSON {
		return timeline.WriteJSON(out, events)
	}
	fmt.Fprintf(out, "run       %s\nworkflow  %s\nstatus    %s\ncreated   %s\n", r.ID, r.Workflow, r.Status, r.CreatedAt.Local().Format(time.RFC3339Nano))
	if len(r.Attributes) > 0 {
		fmt.Fprintf(out, "attrs     %s\n", formatAttrs(r.Attributes))
	}
	if len(r.Output) > 0 {
		fmt.Fprintf(out, "output    %s\n", r.Output)
	}
	if len(r.Error) > 0 {
		fmt.Fprintf(out, "error     %s\n", r.Error)
	}
	fmt.Fprintf(out, "\n%5s  %10s  %-15s %-5s %s\n", "SLOT", "AT", "EVENT", "CALL", "PAYLOAD")
	return timeline.Write(out, events)
}

func formatAttrs(attrs map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		parts = append(parts, k+"="+attrs[k])
	}
	return strings.Join(parts, " ")
}
