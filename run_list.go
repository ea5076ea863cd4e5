package workflow

import (
	"context"
	"maps"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"

	"github.com/lambdaworkflow/workflow/world"
)

// RunFilter selects runs for [Client.ListRuns]. Zero fields match
// everything.
type RunFilter struct {
	Workflow   string
	Status     Status
	Attributes map[string]string // every pair must match
	// Deployment selects the runs pinned to that deployment.
	Deployment string
	// Cursor continues a previous listing (the NextCursor it returned).
	Cursor string
	Limit  int // 0 means the World's default page size
}

// RunPage is one page of a run listing, newest first.
type RunPage struct {
	Runs       []RunInfo
	NextCursor string // empty when there are no more runs
}

// RunInfo describes a run in a listing. [GetRun] gives a typed handle on
// it, to read its result.
type RunInfo struct {
	ID         string
	Workflow   string
	Status     Status
	Attributes map[string]string
	// Deployment is the deployment the run is pinned to, "" until its
	// first execution (see [WorkerOptions].Deployment).
	Deployment string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ListRuns lists runs, newest first, filtered by workflow, status and
// attributes; pass the returned cursor back to get the next page.
func (c *Client) ListRuns(ctx context.Context, filter RunFilter) (RunPage, error) {
	attrs := filter.Attributes
	if filter.Deployment != "" {
		attrs = maps.Clone(attrs)
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs[engine.AttrDeployment] = filter.Deployment
	}
	page, err := c.world.ListRuns(ctx, world.RunFilter{
		Workflow: filter.Workflow, Status: world.RunStatus(filter.Status), Attributes: attrs,
		Cursor: filter.Cursor, Limit: filter.Limit,
	})
	if err != nil {
		return RunPage{}, err
	}
	out := RunPage{Runs: make([]RunInfo, len(page.Runs)), NextCursor: page.NextCursor}
	for i, r := range page.Runs {
		out.Runs[i] = RunInfo{ID: r.ID, Workflow: r.Workflow, Status: Status(r.Status), Attributes: r.Attributes,
			Deployment: r.Attributes[engine.AttrDeployment], CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}
