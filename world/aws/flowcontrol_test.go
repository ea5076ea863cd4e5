package aws

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

var (
	costFree    = workflow.Define("aws.costFree", func(workflow.Context, int) (int, error) { return 0, nil })
	costLimited = workflow.Define("aws.costLimited", func(workflow.Context, int) (int, error) { return 0, nil }, workflow.WithConcurrency(1))
	costRated   = workflow.Define("aws.costRated", func(workflow.Context, int) (int, error) { return 0, nil }, workflow.WithRateLimit(1, time.Hour))
)

// TestCallsPerLimitedStart counts the AWS calls of a Start with and
// without limits, and of the releases that end limited runs. An unlimited
// workflow's start is a transaction and the message's send; a start
// that takes a free slot costs exactly as much (the slot's items ride in
// the run's transaction); the first start behind a full limit costs one
// refused transaction more and no message, the next ones (this World
// remembers the partition full) one transaction; a rate reads the
// partition's head first, and a start it holds back sends its message
// with its dedup marker. A release is a Query of the queue's
// front and a transaction, plus the admitted run's message; repeated (a
// redelivered end), it changes nothing.
func TestCallsPerLimitedStart(t *testing.T) {
	w := newTestWorld(t)
	c := workflow.NewClient(w)
	ctx := t.Context()
	type calls = map[string]int64
	send := calls{"SQS.SendMessage": 1}                                                     // a first message, due now: no dedup marker
	delayed := calls{"DynamoDB.PutItem": 1, "SQS.SendMessage": 1, "DynamoDB.UpdateItem": 1} // held back, with its marker
	plus := func(a, b calls) calls {
		sum := calls{}
		for _, m := range []calls{a, b} {
			for k, v := range m {
				sum[k] += v
			}
		}
		return sum
	}
	var first, queued *workflow.Run[int]
	steps := []struct {
		name string
		do   func(context.Context) error
		want calls
	}{
		{"Start, no limit", func(ctx context.Context) error {
			_, err := workflow.Start(ctx, c, costFree, 1)
			return err
		}, plus(calls{"DynamoDB.TransactWriteItems": 1}, send)},
		{"Start, a free slot", func(ctx context.Context) (err error) {
			first, err = workflow.Start(ctx, c, costLimited, 1, workflow.WithLimitKey("k"))
			return err
		}, plus(calls{"DynamoDB.TransactWriteItems": 1}, send)},
		{"Start, the limit full", func(ctx context.Context) (err error) {
			queued, err = workflow.Start(ctx, c, costLimited, 2, workflow.WithLimitKey("k"))
			return err
		}, calls{"DynamoDB.TransactWriteItems": 2}},
		{"Start, the queue not empty", func(ctx context.Context) error {
			_, err := workflow.Start(ctx, c, costLimited, 3, workflow.WithLimitKey("k"))
			return err
		}, calls{"DynamoDB.TransactWriteItems": 1}},
		{"Start under a rate, the window open", func(ctx context.Context) error {
			_, err := workflow.Start(ctx, c, costRated, 1)
			return err
		}, plus(calls{"DynamoDB.GetItem": 1, "DynamoDB.TransactWriteItems": 1}, send)},
		{"Start under a rate, the window full", func(ctx context.Context) error {
			_, err := workflow.Start(ctx, c, costRated, 2)
			return err
		}, plus(calls{"DynamoDB.GetItem": 1, "DynamoDB.TransactWriteItems": 1}, delayed)},
		{"ReleaseSlot, a run waiting", func(ctx context.Context) error {
			run, err := w.GetRun(ctx, first.ID)
			if err == nil {
				w.ResetCalls()
				err = w.ReleaseSlot(ctx, run, "k")
			}
			return err
		}, plus(calls{"DynamoDB.Query": 1, "DynamoDB.TransactWriteItems": 1}, send)},
		{"ReleaseSlot, again", func(ctx context.Context) error {
			run, err := w.GetRun(ctx, first.ID)
			if err == nil {
				w.ResetCalls()
				err = w.ReleaseSlot(ctx, run, "k")
			}
			return err
		}, calls{"DynamoDB.Query": 1, "DynamoDB.TransactWriteItems": 2}}, // both refused: it holds nothing now
	}
	for _, s := range steps {
		w.ResetCalls()
		if err := s.do(ctx); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkCalls(t, w, s.name, s.want)
		t.Logf("%s: %+v DynamoDB units", s.name, w.Units())
	}
	if st, err := queued.Status(ctx); err != nil || st != workflow.StatusPending {
		t.Fatalf("the run queued first, after the release: %q (%v), want pending", st, err)
	}
	waiting, err := w.ListRuns(ctx, world.RunFilter{Workflow: costLimited.Name(), Status: world.StatusQueued})
	if err != nil || len(waiting.Runs) != 1 {
		t.Fatalf("queued runs after the release: %+v (%v), want the third", waiting.Runs, err)
	}
}
