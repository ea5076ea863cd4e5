package aws

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/lambdaworkflow/workflow/world"
)

// Options names the resources a World uses.
type Options struct {
	Table    string // DynamoDB table: runs, event logs, hooks, live stream chunks
	QueueURL string // SQS standard queue
	Bucket   string // S3 bucket: large payloads and closed streams
	// DeadLetterQueueURL is the queue's dead-letter queue, for listing and
	// redriving dead letters (deadletters.go). Empty: the one the queue's
	// redrive policy names, looked up when first needed.
	DeadLetterQueueURL string
	// Retention is how long a finished run is kept (0:
	// world.DefaultRetention, 30 days; world.KeepForever: for ever); see
	// retention.go.
	Retention time.Duration
	// Scheduler, if set, carries messages due beyond SQS's delay limit
	// (long sleeps) as EventBridge Scheduler schedules; see longsleep.go.
	Scheduler SchedulerOptions
	// LongStepQueueURL, if set, is the SQS queue of runs whose next step
	// fits no Lambda invocation, served by a Worker outside Lambda; see
	// LongStepQueue.
	LongStepQueueURL string
	// StreamEvents, if set, is the AppSync Events API through which stream
	// writers tell readers of new chunks at once (streamevents.go); unset,
	// readers only poll.
	StreamEvents EventAPI
}

// World is a world.World on DynamoDB, SQS and S3. It is safe for concurrent
// use.
type World struct {
	opts  Options
	ddb   *dynamodb.Client
	sqs   *sqs.Client
	s3    *s3.Client
	calls *callCounter
	// scheduler carries messages due later than delayLimit, SQS's 15
	// minutes (tests shorten it); nil: they hop through the queue.
	scheduler  *scheduler.Client
	delayLimit time.Duration
	// retention is Options.Retention resolved; now is the clock expiry is
	// reckoned by (tests replace it).
	retention time.Duration
	now       func() time.Time
	// polls are the SQS long polls in flight; Close waits for them, since
	// one its caller abandoned must still release what it takes.
	polls sync.WaitGroup

	// streamNext remembers the next chunk index of streams this World wrote,
	// so that a writer's next append usually needs no read; a stale entry
	// costs one refused transaction, never a wrong write.
	streamMu   sync.Mutex
	streamNext map[string]int64

	// fullPartitions are the limit partitions (limits.go) whose last
	// start here was queued: the next start tries to queue first.
	fullPartitions sync.Map

	deadMu  sync.Mutex
	deadURL string // Options.DeadLetterQueueURL, or the one found

	inboxObjects inboxObjects // read from inboxes, deleted when folded

	events *streamEvents // nil without Options.StreamEvents
}

var _ world.World = (*World)(nil)

// New returns a World on the resources opts names, with clients built from
// cfg. An endpoint override in cfg (AWS_ENDPOINT_URL) switches S3 to
// path-style addressing, which local emulators need.
func New(cfg aws.Config, opts Options) (*World, error) {
	if opts.Table == "" || opts.QueueURL == "" || opts.Bucket == "" {
		return nil, fmt.Errorf("aws world: table, queue URL and bucket are all required, got %+v", opts)
	}
	if err := opts.Scheduler.validate(); err != nil {
		return nil, err
	}
	if err := opts.StreamEvents.validate(); err != nil {
		return nil, err
	}
	w := &World{opts: opts, calls: newCallCounter(), streamNext: map[string]int64{},
		retention: world.RetentionOrDefault(opts.Retention), now: time.Now, delayLimit: opts.Scheduler.delayLimit()}
	w.ddb, w.sqs, w.s3 = newClients(cfg, w.calls)
	w.scheduler = newSchedulerClient(cfg, opts.Scheduler, w.calls)
	if opts.StreamEvents.enabled() {
		var err error
		if w.events, err = newStreamEvents(cfg, opts, w.calls); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// FromEnv returns a World configured the way the SDK configures itself
// (AWS_REGION, credentials, AWS_ENDPOINT_URL for an emulator) on the
// resources OptionsFromEnv names.
func FromEnv(ctx context.Context) (*World, error) {
	opts, err := OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws world from environment: %w", err)
	}
	return New(cfg, opts)
}

// OptionsFromEnv reads the resources the Lambda functions are given:
// WORKFLOW_TABLE, WORKFLOW_QUEUE_URL and WORKFLOW_BUCKET, optionally
// WORKFLOW_LONG_STEP_QUEUE_URL (see LongStepQueue), and
// WORKFLOW_RETENTION_DAYS, how long finished runs are kept (unset: 30 days;
// 0: for ever), and the scheduler's WORKFLOW_SCHEDULE_GROUP,
// WORKFLOW_SCHEDULER_ROLE_ARN and WORKFLOW_QUEUE_ARN (all or none) and
// WORKFLOW_SCHEDULE_AFTER_SECONDS (see SchedulerOptions.After), and
// WORKFLOW_STREAM_EVENTS_API_ID and WORKFLOW_STREAM_EVENTS_NAMESPACE, the
// AppSync Events API in AWS_REGION that pushes stream writes to readers
// (see EventAPIByID; unset: readers poll). It names every variable that
// is missing or wrong.
func OptionsFromEnv() (Options, error) {
	opts := Options{
		Table:            os.Getenv("WORKFLOW_TABLE"),
		QueueURL:         os.Getenv("WORKFLOW_QUEUE_URL"),
		Bucket:           os.Getenv("WORKFLOW_BUCKET"),
		LongStepQueueURL: os.Getenv("WORKFLOW_LONG_STEP_QUEUE_URL"),
	}
	var missing []error
	for _, v := range []struct{ name, value string }{
		{"WORKFLOW_TABLE", opts.Table}, {"WORKFLOW_QUEUE_URL", opts.QueueURL}, {"WORKFLOW_BUCKET", opts.Bucket},
	} {
		if v.value == "" {
			missing = append(missing, fmt.Errorf("%s is not set", v.name))
		}
	}
	retention, err := retentionFromEnv()
	missing = append(missing, err)
	opts.Retention = retention
	opts.Scheduler, err = schedulerFromEnv()
	missing = append(missing, err)
	opts.StreamEvents, err = eventsFromEnv()
	missing = append(missing, err)
	if err := errors.Join(missing...); err != nil {
		return Options{}, fmt.Errorf("aws world from environment: %w", err)
	}
	return opts, nil
}

// newClients builds the three service clients with the World's retry
// policy and, if counter is set, its call counting.
func newClients(cfg aws.Config, counter *callCounter) (*dynamodb.Client, *sqs.Client, *s3.Client) {
	cfg.HTTPClient = withPlainBodies(cfg.HTTPClient)
	var apiOptions []func(*middleware.Stack) error
	if counter != nil {
		apiOptions = append(apiOptions, counter.register)
	}
	ddb := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.Retryer = newRetryer()
		o.APIOptions = append(o.APIOptions, apiOptions...)
	})
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		o.Retryer = newRetryer()
		o.APIOptions = append(o.APIOptions, apiOptions...)
	})
	blobs := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.Retryer = newRetryer()
		o.APIOptions = append(o.APIOptions, apiOptions...)
		o.UsePathStyle = cfg.BaseEndpoint != nil
	})
	return ddb, q, blobs
}

// Close implements world.World. It waits for SQS long polls still in
// flight (at most their 20 s wait), so that one abandoned by a stopped
// receiver releases the message it takes before the process exits. The SDK
// clients hold nothing else that needs releasing. It closes the Event
// API's connection, if the World's readers opened one.
func (w *World) Close() error {
	if w.events != nil {
		w.events.subs.close()
	}
	w.polls.Wait()
	return nil
}

// Options returns the resources the World uses, so that another World (a
// process of its own, a client apart from the worker) can share them.
func (w *World) Options() Options { return w.opts }
