package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// ReplayRunning is the deploy gate: it replays every run of w that has not
// ended (pending or running) against the workflows of registry (nil: every
// workflow defined in the binary), as [Replay] does, and reports the runs
// the code would break: those it would drive as Failures, and those that
// stay with the deployment they are pinned to as Pinned (keep that
// deployment until they end). Build it into a binary with the code about
// to be deployed and run it before the deploy:
//
//	report, err := workflow.ReplayRunning(ctx, w, orders.Workflows)
//	if err != nil {
//		log.Fatal(err) // the World could not be read: nothing was checked
//	}
//	report.WriteTo(os.Stdout)
//	if len(report.Failures) > 0 {
//		os.Exit(1)
//	}
//
// Nothing is written and no step runs. It reads each run's log once, and
// the run listing a page at a time. Give it the workers' payload codec
// ([WithPayloadCodec]) if they seal runs: without it, a sealed run in
// flight cannot be checked and is reported with the error saying why (a
// *codec.NoKeyError), so that it stops the deploy. It reads runs as a
// [Client] does; the other client options do not bear on a replay.
func ReplayRunning(ctx context.Context, w world.World, registry *Registry, opts ...ClientOption) (ReplayReport, error) {
	reg := engine.Global
	if registry != nil {
		reg = registry.r
	}
	c := NewClient(w, opts...)
	var report ReplayReport
	seen := map[string]bool{} // a run that started between the two listings is listed twice
	for _, status := range []world.RunStatus{world.StatusPending, world.StatusRunning} {
		filter := world.RunFilter{Status: status}
		for {
			page, err := w.ListRuns(ctx, filter)
			if err != nil {
				return report, fmt.Errorf("workflow: listing %s runs: %w", status, err)
			}
			for _, run := range page.Runs {
				if seen[run.ID] {
					continue
				}
				seen[run.ID] = true
				if err := report.replay(ctx, w, reg, c.codec, run); err != nil {
					return report, err
				}
			}
			if page.NextCursor == "" {
				break
			}
			filter.Cursor = page.NextCursor
		}
	}
	return report, nil
}

// ReplayReport is what [ReplayRunning] found.
type ReplayReport struct {
	Replayed int // runs replayed
	// Failures are the runs the code no longer reproduces and that it
	// would drive: runs not yet pinned to a deployment, and runs of
	// workflows whose [VersionPolicy] is Latest. Any of them blocks a
	// deploy.
	Failures []ReplayFailure
	// Pinned are the runs the code no longer reproduces but that stay
	// with the deployment they are pinned to: they are safe while that
	// deployment is kept, and would fail if moved to this code.
	Pinned []ReplayFailure
}

// ReplayFailure is a run the replayed code would break.
type ReplayFailure struct {
	RunID      string
	Workflow   string
	Deployment string // the deployment the run is pinned to, in Pinned
	// Err is a [*NondeterminismError] naming the slot, the call the log
	// records there and the call the code made instead, with its file and
	// line; [ErrUnknownWorkflow] for a workflow the registry lacks; or
	// another error from replay (a log that no longer decodes, a panic).
	Err error
}

func (r *ReplayReport) replay(ctx context.Context, w world.World, reg *engine.Registry, c *codec.Chain, run world.Run) error {
	events, err := w.Events(ctx, run.ID, 0)
	if errors.Is(err, world.ErrRunNotFound) {
		return nil // deleted since it was listed
	}
	if err != nil {
		return fmt.Errorf("workflow: reading the log of run %s: %w", run.ID, err)
	}
	r.Replayed++
	if _, events, err = engine.ForReading(ctx, c, run, events); err == nil {
		err = replayEvents(ctx, reg, events)
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		f := ReplayFailure{RunID: run.ID, Workflow: run.Workflow, Deployment: engine.StaysPinned(reg, run.Workflow, events), Err: err}
		if f.Deployment != "" {
			r.Pinned = append(r.Pinned, f)
		} else {
			r.Failures = append(r.Failures, f)
		}
	}
	return nil
}

// WriteTo prints the report for people: a line per failing run, then a
// summary.
func (r ReplayReport) WriteTo(out io.Writer) (int64, error) {
	var n int64
	print := func(format string, args ...any) error {
		m, err := fmt.Fprintf(out, format, args...)
		n += int64(m)
		return err
	}
	for _, f := range r.Failures {
		if err := print("FAIL %s (workflow %s): %v\n", f.RunID, f.Workflow, f.Err); err != nil {
			return n, err
		}
	}
	for _, f := range r.Pinned {
		if err := print("KEEP deployment %s: %s (workflow %s) is pinned to it and would fail here: %v\n", f.Deployment, f.RunID, f.Workflow, f.Err); err != nil {
			return n, err
		}
	}
	switch {
	case len(r.Failures) > 0:
		return n, print("%d of %d runs in flight would fail on this code\n", len(r.Failures), r.Replayed)
	case len(r.Pinned) > 0:
		return n, print("ok: no run this code would drive fails; %d of %d runs in flight need the deployments they are pinned to\n", len(r.Pinned), r.Replayed)
	}
	return n, print("ok: all %d runs in flight replay on this code\n", r.Replayed)
}
