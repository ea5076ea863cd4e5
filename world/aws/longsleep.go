package aws

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/lambdaworkflow/workflow/world"
)

// SchedulerOptions let a World carry a message due beyond SQS's 15-minute
// delay limit (a long sleep's wake-up) as one EventBridge Scheduler
// one-time schedule that sends it to the queue when it is due, instead of
// a chain of 15-minute hops through the queue (see earlywake.go): a 7-day
// sleep is then 1 CreateSchedule rather than about 670 SQS round trips.
// Set Group, RoleARN and QueueARN, or none of them.
type SchedulerOptions struct {
	// Group is the schedule group the World's schedules are made in.
	Group string
	// RoleARN is the role the scheduler assumes to send to the queue
	// (sqs:SendMessage on it); the World's caller needs iam:PassRole on it.
	RoleARN string
	// QueueARN is the ARN of Options.QueueURL's queue, the schedules' target.
	QueueARN string
	// After is how far off a message must be due to go through the
	// scheduler: SQS's 15-minute delay limit if 0 or longer. Lower it only
	// to see a schedule fire without waiting a quarter of an hour (a test
	// of a deployed stack): a schedule costs more than a delayed message,
	// and the scheduler does not fire to the second.
	After time.Duration
}

// enabled reports whether long delays go through the scheduler.
func (o SchedulerOptions) enabled() bool { return o != SchedulerOptions{} }

func (o SchedulerOptions) validate() error {
	if o.enabled() && (o.Group == "" || o.RoleARN == "" || o.QueueARN == "") {
		return fmt.Errorf("aws world: the scheduler needs a group, a role ARN and the queue's ARN, got %+v", o)
	}
	if o.After < 0 {
		return fmt.Errorf("aws world: the scheduler's After is negative: %v", o.After)
	}
	return nil
}

// delayLimit is the longest delay a message is sent to the queue with.
func (o SchedulerOptions) delayLimit() time.Duration {
	if o.After > 0 {
		return min(o.After, maxDelay)
	}
	return maxDelay
}

// schedulerFromEnv reads WORKFLOW_SCHEDULE_GROUP, WORKFLOW_SCHEDULER_ROLE_ARN
// and WORKFLOW_QUEUE_ARN: all three, or none for the hop chain; and
// WORKFLOW_SCHEDULE_AFTER_SECONDS, After (unset: SQS's limit).
func schedulerFromEnv() (SchedulerOptions, error) {
	o := SchedulerOptions{
		Group:    os.Getenv("WORKFLOW_SCHEDULE_GROUP"),
		RoleARN:  os.Getenv("WORKFLOW_SCHEDULER_ROLE_ARN"),
		QueueARN: os.Getenv("WORKFLOW_QUEUE_ARN"),
	}
	var missing []error
	if v := os.Getenv("WORKFLOW_SCHEDULE_AFTER_SECONDS"); v != "" {
		seconds, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			missing = append(missing, fmt.Errorf("WORKFLOW_SCHEDULE_AFTER_SECONDS=%q is not a number of seconds", v))
		}
		o.After = time.Duration(seconds) * time.Second
	}
	if !o.enabled() {
		return o, errors.Join(missing...)
	}
	for _, v := range []struct{ name, value string }{
		{"WORKFLOW_SCHEDULE_GROUP", o.Group}, {"WORKFLOW_SCHEDULER_ROLE_ARN", o.RoleARN}, {"WORKFLOW_QUEUE_ARN", o.QueueARN},
	} {
		if v.value == "" {
			missing = append(missing, fmt.Errorf("%s is not set, but another of the scheduler's variables is", v.name))
		}
	}
	return o, errors.Join(missing...)
}

// newSchedulerClient is the scheduler's client with the World's retry
// policy and call counting, or nil when long delays hop.
func newSchedulerClient(cfg aws.Config, opts SchedulerOptions, counter *callCounter) *scheduler.Client {
	if !opts.enabled() {
		return nil
	}
	return scheduler.NewFromConfig(cfg, func(o *scheduler.Options) {
		o.Retryer = newRetryer()
		o.APIOptions = append(o.APIOptions, counter.register)
	})
}

// schedule queues body at msg.DeliverAt through a one-time schedule that
// deletes itself once it has fired. The schedule's name derives from the
// message's DedupKey and due time, so an Enqueue repeated by a redelivered
// invocation (or the SDK's retry of a call whose answer was lost) finds
// the schedule made already, and the ConflictException means done: one
// wake-up, as the key asks. That name is the key's marker on this path; no
// dedup item is written. A message without a key gets a name of its own.
func (w *World) schedule(ctx context.Context, msg world.Message, body string) error {
	// at() takes whole seconds; rounding up keeps the message from being
	// due before msg.DeliverAt.
	at := msg.DeliverAt.UTC().Truncate(time.Second)
	if at.Before(msg.DeliverAt) {
		at = at.Add(time.Second)
	}
	sched := w.opts.Scheduler
	_, err := w.scheduler.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name:                       aws.String(scheduleName(msg.DedupKey, at)),
		GroupName:                  aws.String(sched.Group),
		ScheduleExpression:         aws.String("at(" + at.Format("2006-01-02T15:04:05") + ")"),
		ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow:         &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		ActionAfterCompletion:      types.ActionAfterCompletionDelete,
		Target:                     &types.Target{Arn: aws.String(sched.QueueARN), RoleArn: aws.String(sched.RoleARN), Input: aws.String(body)},
	})
	if conflict := (*types.ConflictException)(nil); errors.As(err, &conflict) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("enqueue for run %s at %s: schedule: %w", msg.RunID, at.Format(time.RFC3339), err)
	}
	return nil
}

// scheduleName names the schedule of a message with dedupKey due at at:
// the same key and due time, the same name. A schedule name is at most 64
// of [0-9A-Za-z._-], which a key (a run ID and more) need not be, hence
// the hash. Without a key, every message is a schedule of its own.
func scheduleName(dedupKey string, at time.Time) string {
	if dedupKey == "" {
		return "wake-" + rand.Text()
	}
	sum := sha256.Sum256([]byte(dedupKey + "\x00" + strconv.FormatInt(at.Unix(), 10)))
	return "wake-" + hex.EncodeToString(sum[:20])
}
