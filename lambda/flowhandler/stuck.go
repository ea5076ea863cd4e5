package flowhandler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaworkflow/workflow"
)

// CheckStuckEvent is the input template.yaml's StuckRunCheck schedule
// sends the flow function: instead of a batch of queue messages, it asks
// for a stuck-run check (workflow.Worker.CheckStuck).
const CheckStuckEvent = `{"check":"stuck-runs"}`

// checkRequest is CheckStuckEvent decoded; any event with another check,
// or none, is a batch of queue messages.
type checkRequest struct {
	Check string `json:"check"`
}

// WithStuckCheck returns the flow function's handler: batches of queue
// messages go to batches (Handler's), and CheckStuckEvent runs worker's
// stuck-run check, whose report it answers. A check that fails returns
// its error, so that the invocation counts as failed (the schedule's next
// one tries again); what it did before the error stands.
func WithStuckCheck(worker *workflow.Worker, batches func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req checkRequest
		if json.Unmarshal(raw, &req) == nil && req.Check == "stuck-runs" {
			report, err := worker.CheckStuck(ctx)
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
