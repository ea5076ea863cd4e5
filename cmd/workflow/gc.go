package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

// gcBatch is how many runs one transaction of gc deletes.
const gcBatch = 500

// gc deletes the finished runs past their retention, now. The embedded
// World's worker does the same every few minutes; the AWS World needs no
// sweep: DynamoDB's TTL and the bucket's lifecycle rules delete its runs.
func gc(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("gc", env)
	retention := fs.Duration("retention", world.DefaultRetention, "delete runs that finished longer ago than this; 0 keeps them for ever (reply streams still go an hour after they close)")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	keep := *retention
	if keep == 0 {
		keep = world.KeepForever
	}
	w, err := wf.open(ctx, local.WithRetention(keep))
	if err != nil {
		return err
	}
	defer w.Close()
	sweeper, ok := w.(world.Sweeper)
	if !ok {
		fmt.Fprintln(env.out, "nothing to sweep: this World's finished runs expire by themselves (DynamoDB TTL, S3 lifecycle rules)")
		return nil
	}
	total := 0
	start := time.Now()
	for {
		n, err := sweeper.Sweep(ctx, gcBatch)
		total += n
		if err != nil {
			return fmt.Errorf("gc: deleted %d runs, then: %w", total, err)
		}
		if n < gcBatch {
			break
		}
	}
	fmt.Fprintf(env.out, "deleted %d runs that finished more than %s ago (%s)\n", total, *retention, time.Since(start).Round(time.Millisecond))
	return nil
}
