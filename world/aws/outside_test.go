package aws

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// inbox takes messages on its token until it is cancelled.
var inbox = workflow.Define("aws-test.inbox", func(ctx workflow.Context, token string) (int, error) {
	h := workflow.CreateHook[string](ctx, workflow.WithToken(token))
	n := 0
	for _, err := range h.All(ctx) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
})

// Writers from outside a run (a resume, a cancellation) append after the
// run's LastSlot: their first transaction lands, with no lost slot to
// read back, and the cancellation releases the run's token before it
// returns.
func TestOutsideWritersLandFirstTry(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	outside, err := New(emulatorConfig(t), w.opts) // the caller's World, apart from the worker's
	if err != nil {
		t.Fatal(err)
	}
	c := workflow.NewClient(outside)
	token := "aws-test:" + fmt.Sprint(time.Now().UnixNano())
	run, err := workflow.Start(ctx, c, inbox, token)
	if err != nil {
		t.Fatal(err)
	}
	for workflow.ResumeHook(ctx, c, token, "first") != nil { // until the run holds its token
		time.Sleep(50 * time.Millisecond)
	}
	outside.ResetCalls()
	if err := workflow.ResumeHook(ctx, c, token, "second"); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, outside, "a resume", map[string]int64{
		"DynamoDB.GetItem": 2, "DynamoDB.Query": 1, "DynamoDB.TransactWriteItems": 1, "SQS.SendMessage": 1,
	})
	outside.ResetCalls()
	if err := run.Cancel(ctx, "enough"); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, outside, "a cancellation", map[string]int64{
		"DynamoDB.Query": 2, "DynamoDB.DeleteItem": 1, "DynamoDB.TransactWriteItems": 1, "SQS.SendMessage": 1,
	})
	if _, err := c.GetHook(ctx, token); err == nil {
		t.Fatal("the cancelled run's token is still held after Cancel returned")
	}
}
