package lambdaapp

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// ReminderRequest is the input of Reminder.
type ReminderRequest struct {
	Note         string `json:"note"`
	AfterSeconds int    `json:"afterSeconds"`
}

// Reminder sleeps, then reminds. Nothing runs while it sleeps: on Lambda,
// a sleep past SQS's 15-minute delay limit wakes through one EventBridge
// Scheduler schedule when the stack gives the flow function a schedule
// group, or else through a hop through the queue every 15 minutes.
var Reminder = workflow.Define("lambdaapp.reminder", func(ctx workflow.Context, r ReminderRequest) (string, error) {
	workflow.Sleep(ctx, time.Duration(r.AfterSeconds)*time.Second)
	return remind.Call(ctx, r.Note)
})

// remind names the Lambda function it ran in (empty outside Lambda), so a
// caller can see the run woke in the flow function.
var remind = workflow.DefineStep("lambdaapp.remind", func(ctx context.Context, note string) (string, error) {
	return fmt.Sprintf("reminded of %q by %s", note, os.Getenv("AWS_LAMBDA_FUNCTION_NAME")), nil
})
