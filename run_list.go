package workflow

import (
	"context"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// RunFilter selects runs for [Client.ListRuns]. Zero fields match
// everything.
type RunFilter struct {
	Workflow   string
	Status     Status
	Attributes map[string]string // every pair must match
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
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ListRuns lists runs, newest first, filtered by workflow, status and
// attributes; pass the returned cursor back to get the next page.
func (c *Client) ListRuns(ctx context.Context, filter RunFilter) (RunPage, error) {
	page, err := c.world.ListRuns(ctx, world.RunFilter{
		Workflow: filter.Workflow, Status: world.RunStatus(filter.Status), Attributes: filter.Attributes,
		Cursor: filter.Cursor, Limit: filter.Limit,
	})
	if err != nil {
		return RunPage{}, err
	}
	out := RunPage{Runs: make([]RunInfo, len(page.Runs)), NextCursor: page.NextCursor}
	for i, r := range page.Runs {
		out.Runs[i] = RunInfo{ID: r.ID, Workflow: r.Workflow, Status: Status(r.Status), Attributes: r.Attributes,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}
