// Package flowhandler is the AWS Lambda adapter: it serves workflows from
// a Lambda function triggered by SQS, the "flow" function of the AWS
// deployment (template.yaml).
//
// An application names the workflows the function runs in a
// workflow.Registry and calls Start:
//
//	package main
//
//	import (
//		"github.com/lambdaworkflow/workflow"
//		"github.com/lambdaworkflow/workflow/lambda/flowhandler"
//		"example.com/app/orders" // var Workflows = workflow.NewRegistry(Checkout, ...)
//	)
//
//	func main() { flowhandler.Start(workflow.WorkerOptions{Registry: orders.Workflows}) }
//
// Without a Registry it runs every workflow defined in the binary.
//
// Each SQS message names a run. The handler replays the run and drives it
// as far as the invocation's deadline allows: steps run inline, and the
// engine hands the run off through the queue shortly before the deadline.
// A message whose run could not be processed is reported as a batch item
// failure, so that only it is delivered again (the event source mapping
// needs FunctionResponseTypes: [ReportBatchItemFailures]); after the
// queue's maxReceiveCount it goes to the dead-letter queue.
//
// The same function runs the stuck-run check when a schedule invokes it
// with CheckStuckEvent (WithStuckCheck): a run whose message was
// dead-lettered or lost is re-queued, and failed if that does not help.
package flowhandler

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// Deliveries is what the handler needs from the World besides the worker:
// the event source mapping receives messages in the World's place, so the
// handler must report each delivery, as (*aws.World).Receive would.
// *aws.World implements it.
type Deliveries interface {
	Delivered(ctx context.Context, msg world.Message) error
	// RequeueIfEarly queues a message that arrived before it is due
	// again (a long sleep's hop through the queue) and reports whether
	// it did: the handler then drops its copy without replaying the run.
	RequeueIfEarly(ctx context.Context, msg world.Message) (bool, error)
	// Enqueue puts a message back on the queue: a version that was handed
	// a message it could not process has no batch to fail it in.
	Enqueue(ctx context.Context, msg world.Message) error
}

// Start serves the workflows of opts.Registry (or of the binary) on the
// AWS World named by the environment (WORKFLOW_TABLE, WORKFLOW_QUEUE_URL,
// WORKFLOW_BUCKET; see aws.FromEnv). With WORKFLOW_LONG_STEP_QUEUE_URL
// set, a run whose next step fits no invocation of the function goes to
// that queue, for a Worker outside Lambda (aws.World.LongStepQueue). Webhook URLs are built on WORKFLOW_WEBHOOK_BASE_URL
// (the webhook function's URL) unless opts sets WebhookBaseURL. It does
// not return. A World that cannot be built is an init error: Lambda
// reports it and the message is delivered again later.
//
// Unless opts sets a Logger, the function logs JSON lines with each
// invocation's aws_request_id (package lambdalog), at the level of its
// LoggingConfig.
func Start(opts workflow.WorkerOptions) {
	logger := lambdalog.Setup()
	if opts.Logger == nil {
		opts.Logger = logger
	}
	if opts.WebhookBaseURL == "" {
		opts.WebhookBaseURL = os.Getenv("WORKFLOW_WEBHOOK_BASE_URL")
	}
	if opts.Deployment == "" {
		// The published version this invocation runs ("$LATEST" when the
		// function is not published: see docs/AWS.md).
		opts.Deployment = os.Getenv("AWS_LAMBDA_FUNCTION_VERSION")
	}
	ctx := context.Background()
	w, err := aws.FromEnv(ctx)
	if err != nil {
		slog.Error("flow: cannot build the AWS World", "err", err)
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		slog.Error("flow: cannot load the AWS configuration", "err", err)
		os.Exit(1)
	}
	handoff := LambdaHandoff{Client: awslambda.NewFromConfig(cfg), Function: os.Getenv("AWS_LAMBDA_FUNCTION_NAME")}
	if opts.Codec == nil {
		opts.Codec = aws.PayloadCodecFromEnv(cfg) // WORKFLOW_PAYLOAD_KMS_KEY
	}
	if opts.LongStepQueue == nil && w.Options().LongStepQueueURL != "" {
		// WORKFLOW_LONG_STEP_QUEUE_URL: steps that fit no invocation go
		// to the Worker outside Lambda that serves it.
		long, _ := w.LongStepQueue()
		opts.LongStepQueue = long
	}
	worker := workflow.NewWorker(w, opts)
	lambda.Start(WithStuckCheck(worker, Handler(worker, w, handoff)))
}

// Handler returns the Lambda handler for batches of queue messages. Runs of
// one batch are processed concurrently; several messages for one run are
// processed once, and share the outcome.
//
// A run pinned to another deployment (a published version of the
// function) is not processed here: handoff gives its message to that
// version, and this copy is acknowledged once the version has it. A nil
// handoff, or a failed one, reports the message as failed, to be
// delivered again.
func Handler(worker *workflow.Worker, d Deliveries, handoff Handoff) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		// An empty list, never null, when nothing failed: that is the
		// documented shape, and an event source that reads null as an
		// error (MiniStack's) would redeliver the whole batch.
		resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		fail := func(m events.SQSMessage) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
		defer flush(ctx)
		byRun := map[string][]events.SQSMessage{}
		traces := map[string]string{}
		var order []string
		for _, m := range ev.Records {
			msg, err := aws.DecodeMessage(m.Body)
			if err != nil {
				// Not a message the World sent: retrying cannot help, but
				// failing it lets the redrive policy park it in the DLQ
				// where someone will see it.
				slog.ErrorContext(ctx, "flow: undecodable message", "message_id", m.MessageId, "err", err)
				fail(m)
				continue
			}
			if err := d.Delivered(ctx, msg); err != nil {
				slog.ErrorContext(ctx, "flow: reporting delivery failed", "run_id", msg.RunID, "err", err)
				fail(m)
				continue
			}
			if early, err := d.RequeueIfEarly(ctx, msg); err != nil {
				slog.ErrorContext(ctx, "flow: requeueing an early wake-up failed", "run_id", msg.RunID, "err", err)
				fail(m)
				continue
			} else if early {
				continue
			}
			engine.RecordQueueLag(ctx, msg, sentAt(m), time.Now())
			if _, seen := byRun[msg.RunID]; !seen {
				order = append(order, msg.RunID)
				traces[msg.RunID] = msg.Trace
			}
			byRun[msg.RunID] = append(byRun[msg.RunID], m)
		}
		errs := make([]error, len(order))
		var wg sync.WaitGroup
		for i, runID := range order {
			wg.Go(func() {
				errs[i] = deliver(engine.WithTraceParent(ctx, traces[runID]), worker, handoff, runID, byRun[runID][0])
			})
		}
		wg.Wait()
		var requeueFailed error
		for i, runID := range order {
			if errs[i] == nil {
				continue
			}
			if byRun[runID][0].EventSource == handoffSource {
				// Handed over by another version, asynchronously: nobody
				// reads this batch response, so the message goes back on
				// the queue, and if even that fails, Lambda retries the
				// whole event.
				slog.ErrorContext(ctx, "flow: processing a handed-over run failed; it goes back on the queue", "run_id", runID, "err", errs[i])
				requeueFailed = errors.Join(requeueFailed, d.Enqueue(ctx, world.Message{RunID: runID}))
				continue
			}
			slog.ErrorContext(ctx, "flow: processing run failed; its message will be delivered again", "run_id", runID, "err", errs[i])
			for _, m := range byRun[runID] {
				fail(m)
			}
		}
		return resp, requeueFailed
	}
}

// deliver processes one run's message here, or hands it to the version
// its run is pinned to. Only a message from the queue is handed on: one
// handed over already goes back to the queue if it is pinned elsewhere
// again, so that two versions never pass it to and fro.
func deliver(ctx context.Context, worker *workflow.Worker, handoff Handoff, runID string, m events.SQSMessage) error {
	err := process(ctx, worker, runID)
	var pinned *workflow.PinnedError
	if !errors.As(err, &pinned) || handoff == nil || m.EventSource == handoffSource {
		return err
	}
	if err := handoff.HandOff(ctx, pinned.Deployment, m); err != nil {
		return err
	}
	slog.InfoContext(ctx, "flow: run handed over to its deployment", "run_id", runID, "deployment", worker.Deployment(), "pinned_to", pinned.Deployment)
	return nil
}

// process drives one run. A run that does not exist never will: its
// message is dropped rather than redelivered.
func process(ctx context.Context, worker *workflow.Worker, runID string) error {
	err := worker.Process(ctx, runID)
	if errors.Is(err, world.ErrRunNotFound) {
		slog.WarnContext(ctx, "flow: message for a run that does not exist; dropped", "run_id", runID)
		return nil
	}
	return err
}

// sentAt is when SQS received m, from its SentTimestamp attribute
// (milliseconds since the epoch); zero if unknown.
func sentAt(m events.SQSMessage) time.Time {
	ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// flush exports the batch's spans and metrics, if telemetry is on, before
// the handler returns and Lambda may freeze the process.
func flush(ctx context.Context) {
	if err := engine.FlushTelemetry(context.WithoutCancel(ctx)); err != nil {
		slog.WarnContext(ctx, "flow: exporting telemetry failed", "err", err)
	}
}
