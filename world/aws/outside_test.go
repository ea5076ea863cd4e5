package aws

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
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

// Writers from outside a run land first try: a resume puts its message in
// the run's inbox (one PutItem, no transaction), and a cancellation
// appends after the run's LastSlot, with no lost slot to read back, and
// releases the run's token before it returns.
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
		"DynamoDB.GetItem": 2, "DynamoDB.Query": 1, "DynamoDB.PutItem": 1, "SQS.SendMessage": 1,
	})
	waitFolded(t, w, run.ID, 2) // the run takes the message in on its own time
	outside.ResetCalls()
	if err := run.Cancel(ctx, "enough"); err != nil {
		t.Fatal(err)
	}
	// Two messages: the prompt one, and the follow-up queued before the
	// append in case the canceller dies between the two.
	checkCalls(t, outside, "a cancellation", map[string]int64{
		"DynamoDB.Query": 2, "DynamoDB.DeleteItem": 1, "DynamoDB.TransactWriteItems": 1, "SQS.SendMessage": 2,
	})
	if _, err := c.GetHook(ctx, token); err == nil {
		t.Fatal("the cancelled run's token is still held after Cancel returned")
	}
}

// waitFolded waits until the run's log holds n hook messages.
func waitFolded(t *testing.T, w *World, runID string, n int) {
	t.Helper()
	for {
		evs, err := w.Events(t.Context(), runID, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, ev := range evs {
			if ev.Type == world.HookReceived {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
