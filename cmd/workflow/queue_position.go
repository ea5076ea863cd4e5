package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// printQueuePosition prints where a queued run stands in its limit key's
// queue: behind how many of the key's queued runs. Every World lets a
// partition's queued runs in by their creation (time, then ID), so the
// queued runs of the workflow with the same key created before it are
// the ones ahead. It reads each queued run of the workflow's first event:
// a diagnostic's cost, paid only for a queued run.
func printQueuePosition(ctx context.Context, out io.Writer, w world.World, c *codec.Chain, r world.Run, created world.Event) {
	key, limited, err := engine.LimitKey(created)
	if err == nil && limited {
		var ahead, queued int
		if ahead, queued, err = queuePlace(ctx, w, c, r, key); err == nil {
			fmt.Fprintf(out, "queue     %d of %d queued under key %s (%d ahead)\n", ahead+1, queued, strconv.Quote(key), ahead)
			return
		}
	}
	if err != nil {
		fmt.Fprintf(out, "queue     position unknown: %v\n", err)
	}
}

// queuePlace counts the queued runs of r's workflow under key: those
// created before r, and all of them.
func queuePlace(ctx context.Context, w world.World, c *codec.Chain, r world.Run, key string) (ahead, queued int, err error) {
	filter := world.RunFilter{Workflow: r.Workflow, Status: world.StatusQueued}
	for {
		page, err := w.ListRuns(ctx, filter)
		if err != nil {
			return 0, 0, err
		}
		for _, other := range page.Runs {
			events, err := w.Events(ctx, other.ID, 0)
			if err != nil {
				return 0, 0, err
			}
			if other, events, _ = engine.ForReading(ctx, c, other, events); len(events) == 0 {
				continue
			}
			if k, limited, err := engine.LimitKey(events[0]); err != nil || !limited || k != key {
				continue
			}
			queued++
			if other.CreatedAt.Before(r.CreatedAt) || other.CreatedAt.Equal(r.CreatedAt) && other.ID < r.ID {
				ahead++
			}
		}
		if page.NextCursor == "" {
			return ahead, queued, nil
		}
		filter.Cursor = page.NextCursor
	}
}
