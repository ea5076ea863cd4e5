package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// runFilters are the flags that select runs, shared by the commands that
// list runs and that act on many.
type runFilters struct {
	workflow     string
	status       statusFlag
	attrs        attrFlags
	since, until timeFlag
}

func registerRunFilters(fs *flag.FlagSet) *runFilters {
	f := &runFilters{attrs: attrFlags{}}
	fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
	fs.Var(&f.status, "status", "only runs in this status: "+strings.Join(statusNames(), ", "))
	fs.Var(f.attrs, "attr", "only runs with this attribute (key=value), repeatable")
	fs.Func("deployment", "only runs pinned to this deployment (see workflow deployments)", func(v string) error {
		f.attrs[engine.AttrDeployment] = v
		return nil
	})
	fs.Var(&f.since, "since", "only runs created at or after this time (RFC 3339, a date, or a duration ago: 2h)")
	fs.Var(&f.until, "until", "only runs created before this time (same forms as --since)")
	return f
}

// any reports whether the filters select fewer than all runs.
func (f *runFilters) any() bool {
	return f.workflow != "" || f.status != "" || len(f.attrs) > 0 || !f.since.IsZero() || !f.until.IsZero()
}

// runs yields the runs the filters select, newest first, paging through
// the World's listing; it stops paging once runs are older than --since.
func (f *runFilters) runs(ctx context.Context, w world.Store) iter.Seq2[world.Run, error] {
	return func(yield func(world.Run, error) bool) {
		filter := world.RunFilter{Workflow: f.workflow, Status: world.RunStatus(f.status), Attributes: f.attrs}
		for {
			page, err := w.ListRuns(ctx, filter)
			if err != nil {
				yield(world.Run{}, err)
				return
			}
			for _, r := range page.Runs {
				if !f.since.IsZero() && r.CreatedAt.Before(f.since.Time) {
					return
				}
				if !f.until.IsZero() && !r.CreatedAt.Before(f.until.Time) {
					continue
				}
				if !yield(r, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			filter.Cursor = page.NextCursor
		}
	}
}

type statusFlag world.RunStatus

var statuses = []world.RunStatus{world.StatusQueued, world.StatusPending, world.StatusRunning, world.StatusCompleted, world.StatusFailed, world.StatusCancelled}

func statusNames() []string {
	var names []string
	for _, s := range statuses {
		names = append(names, string(s))
	}
	return names
}

func (s *statusFlag) String() string { return string(*s) }

func (s *statusFlag) Set(v string) error {
	if !slices.Contains(statuses, world.RunStatus(v)) {
		return fmt.Errorf("unknown status %q: want one of %s", v, strings.Join(statusNames(), ", "))
	}
	*s = statusFlag(v)
	return nil
}

type attrFlags map[string]string

func (a attrFlags) String() string { return formatAttrs(a) }

func (a attrFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("--attr wants key=value, got %q", v)
	}
	a[k] = val
	return nil
}

// timeFlag is a point in time, given absolutely or as a duration ago.
type timeFlag struct{ time.Time }

func (t *timeFlag) String() string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func (t *timeFlag) Set(v string) error {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		t.Time = time.Now().Add(-d)
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", time.DateTime, time.DateOnly} {
		if at, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			t.Time = at
			return nil
		}
	}
	return fmt.Errorf("%q is neither a time (2026-12-01T09:30:00Z, 2026-12-01) nor a duration ago (90m)", v)
}

func formatAttrs(attrs map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		parts = append(parts, k+"="+attrs[k])
	}
	return strings.Join(parts, " ")
}
