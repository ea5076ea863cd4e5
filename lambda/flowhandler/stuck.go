package flowhandler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaworkflow/workflow"
)

// StuckCheckEvent is the input of template.yaml's StuckRunCheck schedule:
// instead of a batch of queue messages, it asks the flow function for a
// stuck-run check (workflow.Worker.CheckStuck).
type StuckCheckEvent struct {
	Check string `json:"check"` // "stuck-runs"
	// StuckAfterSeconds is the check's threshold (0: the worker's
	// StuckAfter). The template gives the queue's visibility timeout, so
	// that a message whose delivery failed is delivered again before its
	// run counts as stuck.
	StuckAfterSeconds int `json:"stuckAfterSeconds,omitempty"`
}

// checkStuckRuns is StuckCheckEvent's Check.
const checkStuckRuns = "stuck-runs"

// CheckStuckEvent is a StuckCheckEvent with the worker's own threshold
// (WorkerOptions.StuckAfter).
const CheckStuckEvent = `{"check":"` + checkStuckRuns + `"}`

// WithStuckCheck returns the flow function's handler: batches of queue
// messages go to batches (Handler's), and a StuckCheckEvent runs worker's
// stuck-run check, whose report it answers. A check that fails returns
// its error, so that the invocation counts as failed (the schedule's next
// one tries again); what it did before the error stands.
func WithStuckCheck(worker *workflow.Worker, batches func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req StuckCheckEvent
		if json.Unmarshal(raw, &req) == nil && req.Check == checkStuckRuns {
			report, err := worker.CheckStuck(ctx, time.Duration(req.StuckAfterSeconds)*time.Second)
			slog.InfoContext(ctx, "flow: stuck-run check", "requeued", len(report.Requeued), "failed", len(report.Failed), "more", report.More, "err", err)
			return report, err
		}
		var batch events.SQSEvent
		if err := json.Unmarshal(raw, &batch); err != nil {
			return nil, fmt.Errorf("flow: the event is neither a stuck-run check nor a batch of queue messages: %w", err)
		}
		return batches(ctx, batch)
	}
}
