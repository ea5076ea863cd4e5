package engine

import (
	"context"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Limits bound a workflow's runs per limit key: how many hold a slot at
// once and how many start per period (see world.Limit).
type Limits struct {
	Concurrency int
	Rate        int
	Period      time.Duration
}

// Limit is the world.Limit of a run of workflow started with key.
func (l *Limits) Limit(workflow, key string) *world.Limit {
	return &world.Limit{Workflow: workflow, Key: key, Concurrency: l.Concurrency, Rate: l.Rate, Period: l.Period}
}

// limitRef is recorded in a limited run's run_created: the key of the
// partition it counts in, which its end releases.
type limitRef struct {
	Key string `json:"key"`
}

// releaseSlot frees what a finished run holds under its limit, if it ran
// under one: its slot passes to the partition's next queued run. A
// continued run's slot stays for its successor, which takes it over.
func releaseSlot(ctx context.Context, w world.World, run world.Run, limit *limitRef) error {
	if limit == nil || run.Status == world.StatusContinued {
		return nil
	}
	return w.ReleaseSlot(ctx, run, limit.Key)
}

// successorLimit is the limit a continued run's successor starts under:
// the slot it takes over from the run, within the limits the workflow's
// definition has now (none: it holds the slot unbounded and frees it at
// its end).
func (e *Engine) successorLimit(run world.Run, limit *limitRef) *world.Limit {
	if limit == nil {
		return nil
	}
	l := &world.Limit{Workflow: run.Workflow, Key: limit.Key}
	if def, ok := e.Registry.Workflow(run.Workflow); ok && def.Limits != nil {
		l = def.Limits.Limit(run.Workflow, limit.Key)
	}
	l.From = run.ID
	return l
}

// LimitKey returns the limit key a run's run_created records, and whether
// the run started under a limit at all.
func LimitKey(created world.Event) (string, bool, error) {
	p, err := decodePayload[runCreatedPayload](created)
	if err != nil || p.Limit == nil {
		return "", false, err
	}
	return p.Limit.Key, true, nil
}
