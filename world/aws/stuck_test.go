package aws

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world/worldtest"
)

// A run whose message SQS dead-lettered (every delivery failed until the
// queue's redrive policy set it aside) is re-queued by the stuck-run check
// and completes; a run whose re-queued message is dead-lettered too fails
// with ErrRunStuck. The checks run on a clock an hour ahead, so no test
// waits out the threshold; their calls are counted.
func TestDeadLetteredRunsAreRequeuedThenFailed(t *testing.T) {
	w := newDeadLetterWorld(t)
	ctx := t.Context()
	c := workflow.NewClient(w)
	var ahead atomic.Int64
	ahead.Store(int64(time.Hour))
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	check := func(what string, want map[string]int64) workflow.StuckReport {
		t.Helper()
		w.ResetCalls()
		report, err := worker.CheckStuck(ctx, 0)
		if err != nil {
			t.Fatalf("%s: CheckStuck: %v", what, err)
		}
		t.Logf("AWS calls of %s: %v", what, w.Calls())
		checkCalls(t, w, what, want)
		return report
	}
	deliver := func(runID string) {
		t.Helper()
		receive, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := w.Receive(receive, time.Minute)
		if err != nil || d.RunID != runID {
			t.Fatalf("the queue holds %+v, %v; want the re-queued message of %s", d, err, runID)
		}
		if err := worker.Handle(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	requeueCalls := map[string]int64{"DynamoDB.Query": dueShards, "DynamoDB.BatchGetItem": 1, "SQS.SendMessage": 1, "DynamoDB.UpdateItem": 1}

	recovered, err := workflow.Start(ctx, c, awsChain, 2)
	if err != nil {
		t.Fatal(err)
	}
	worldtest.FailUntilDead(ctx, t, w, 1)
	if r := check("a check that re-queues a run", requeueCalls); len(r.Requeued) != 1 || r.Requeued[0] != recovered.ID {
		t.Fatalf("the check re-queued %v, want %s", r.Requeued, recovered.ID)
	}
	deliver(recovered.ID)
	if got, err := recovered.Result(ctx); err != nil || got != 2 {
		t.Fatalf("the re-queued run: %d, %v; want 2", got, err)
	}
	check("a check that finds nothing", map[string]int64{"DynamoDB.Query": dueShards})

	lost, err := workflow.Start(ctx, c, awsChain, 1)
	if err != nil {
		t.Fatal(err)
	}
	worldtest.FailUntilDead(ctx, t, w, 2)
	check("a check that re-queues a run", requeueCalls)
	worldtest.FailUntilDead(ctx, t, w, 3) // the re-queued message, too
	ahead.Add(int64(engine.DefaultStuckAfter + time.Minute))
	r := check("a check that fails a run", map[string]int64{
		"DynamoDB.Query": dueShards + 1, "DynamoDB.BatchGetItem": 1, // and the log
		"DynamoDB.UpdateItem": 1, "DynamoDB.TransactWriteItems": 1, "SQS.SendMessage": 2, // the lease, the end, its message and the follow-up that finishes what a crash would leave undone
	})
	if len(r.Failed) != 1 || r.Failed[0] != lost.ID {
		t.Fatalf("the check failed %v, want %s", r.Failed, lost.ID)
	}
	if _, err := lost.Result(ctx); !errors.Is(err, workflow.ErrRunStuck) {
		t.Fatalf("the stuck run's result: %v, want ErrRunStuck", err)
	}
}
