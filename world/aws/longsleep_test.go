package aws

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// longSleep is the tests' long sleep: 20 s, beyond the delay limit the
// tests give the World in SQS's 15 minutes' place.
const (
	longSleep       = 20 * time.Second
	testDelayLimit  = 4 * time.Second
	schedulerFiring = time.Minute // MiniStack fires due schedules every 10 s
)

var awsSleeper = workflow.Define("aws-test.long-sleep", func(ctx workflow.Context, d time.Duration) (time.Time, error) {
	workflow.Sleep(ctx, d)
	return workflow.Now(ctx), nil
})

// newSchedulerWorld is newTestWorld with a schedule group of the test's
// own, deleted with its schedules when the test ends, and a delay limit
// of testDelayLimit. MiniStack takes any role ARN.
func newSchedulerWorld(t *testing.T) (*World, *scheduler.Client) {
	t.Helper()
	base := newTestWorld(t)
	cfg := emulatorConfig(t)
	ctx := t.Context()
	sched := scheduler.NewFromConfig(cfg)
	group := base.opts.Table // unique to the test
	if _, err := sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(group)}); err != nil {
		t.Fatalf("CreateScheduleGroup: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := sched.DeleteScheduleGroup(ctx, &scheduler.DeleteScheduleGroupInput{Name: aws.String(group)}); err != nil {
			t.Logf("DeleteScheduleGroup: %v", err)
		}
	})
	attrs, err := sqs.NewFromConfig(cfg).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(base.opts.QueueURL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	opts := base.opts
	opts.Scheduler = SchedulerOptions{
		Group:    group,
		RoleARN:  "arn:aws:iam::000000000000:role/" + group,
		QueueARN: attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)],
	}
	w, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	w.delayLimit = testDelayLimit
	return w, sched
}

// schedules lists the schedules in the World's group.
func schedules(t *testing.T, w *World, sched *scheduler.Client) []schedtypes.ScheduleSummary {
	t.Helper()
	out, err := sched.ListSchedules(t.Context(), &scheduler.ListSchedulesInput{GroupName: aws.String(w.opts.Scheduler.Group)})
	if err != nil {
		t.Fatalf("ListSchedules: %v", err)
	}
	return out.Schedules
}

// A sleep beyond the delay limit is one schedule, which wakes the run when
// it is due and then deletes itself: 1 CreateSchedule and no SQS message
// besides the run's start, where the hop chain would send one per hop.
func TestLongSleepCostsOneSchedule(t *testing.T) {
	t.Parallel()
	w, sched := newSchedulerWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), longSleep+schedulerFiring)
	defer cancel()
	go func() { _ = workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx) }()
	started := time.Now()
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsSleeper, longSleep)
	if err != nil {
		t.Fatal(err)
	}
	woke, err := run.Result(ctx)
	if err != nil {
		t.Fatalf("the run did not wake: %v", err)
	}
	if slept := woke.Sub(started); slept < longSleep {
		t.Errorf("the run woke after %v, before its %v sleep was over", slept, longSleep)
	}
	calls := w.Calls()
	t.Logf("AWS calls of a run that sleeps %v through the scheduler: %v", longSleep, calls)
	if n := calls["Scheduler.CreateSchedule"]; n != 1 {
		t.Errorf("%d CreateSchedule, want 1", n)
	}
	if n := calls["SQS.SendMessage"]; n != 1 {
		t.Errorf("%d SendMessage, want 1 (the start; the wake-up is the scheduler's)", n)
	}
	if left := schedules(t, w, sched); len(left) != 0 {
		t.Errorf("schedules left after firing: %+v; want none (ActionAfterCompletion DELETE)", left)
	}
}

// A redelivered suspension (the invocation's message comes back, the
// replay suspends on the same timer again) finds the schedule made
// already: one schedule, one wake-up, and the run completes.
func TestRedeliveredSuspendMakesOneSchedule(t *testing.T) {
	t.Parallel()
	w, sched := newSchedulerWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), longSleep+schedulerFiring)
	defer cancel()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsSleeper, longSleep)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := worker.Process(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.Calls()["Scheduler.CreateSchedule"]; n != 2 {
		t.Fatalf("%d CreateSchedule, want 2: one per suspension", n)
	}
	if got := schedules(t, w, sched); len(got) != 1 {
		t.Fatalf("%d schedules after two suspensions on one timer, want 1: %+v", len(got), got)
	}
	go func() { _ = worker.Run(ctx) }()
	if _, err := run.Result(ctx); err != nil {
		t.Fatalf("the run did not wake: %v", err)
	}
}

// Without a scheduler, a wake-up beyond the delay limit hops through the
// queue; each early arrival costs one read of the run's log head and the
// next hop, never a replay (no log Query, no lease, no append). The last
// arrival is due and goes to the engine.
func TestEarlyWakeUpCostsOneRead(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t)
	w.delayLimit = 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	sleep := 7 * time.Second
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsSleeper, sleep)
	if err != nil {
		t.Fatal(err)
	}
	start, err := w.Receive(ctx, time.Minute) // the start: due at once
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Handle(ctx, start); err != nil {
		t.Fatal(err)
	}
	w.ResetCalls()
	wake, err := w.Receive(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	calls := w.Calls()
	t.Logf("AWS calls of the hops before a %v wake-up with a %v delay limit: %v", sleep, w.delayLimit, calls)
	hops := calls["SQS.SendMessage"]
	if hops == 0 {
		t.Fatalf("no hop: the wake-up was not sent early (calls %v)", calls)
	}
	if calls["DynamoDB.GetItem"] != hops {
		t.Errorf("%d log head reads for %d hops, want one each", calls["DynamoDB.GetItem"], hops)
	}
	for _, op := range []string{"DynamoDB.Query", "DynamoDB.TransactWriteItems", "DynamoDB.BatchGetItem"} {
		if calls[op] != 0 {
			t.Errorf("%d %s during the hops, want none: an early wake-up replays nothing", calls[op], op)
		}
	}
	if time.Until(wake.DeliverAt) > earlyBy {
		t.Errorf("Receive returned a wake-up due in %v", time.Until(wake.DeliverAt))
	}
	if err := worker.Handle(ctx, wake); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Result(ctx); err != nil {
		t.Fatalf("the run did not finish after its wake-up: %v", err)
	}
}

// An early wake-up of a run that has finished (or is gone) ends the chain:
// one read, nothing queued.
func TestEarlyWakeUpOfAFinishedRunEndsTheHops(t *testing.T) {
	w := newTestWorld(t)
	w.ResetCalls()
	early, err := w.RequeueIfEarly(t.Context(), wakeUp("no-such-run", time.Hour))
	if err != nil || !early {
		t.Fatalf("RequeueIfEarly = %v, %v; want early", early, err)
	}
	checkCalls(t, w, "an early wake-up of a run that is gone", map[string]int64{"DynamoDB.GetItem": 1})
	if early, err := w.RequeueIfEarly(t.Context(), wakeUp("no-such-run", 0)); err != nil || early {
		t.Errorf("RequeueIfEarly of a due message = %v, %v; want not early", early, err)
	}
}

// wakeUp is a timer's wake-up for runID, due in d.
func wakeUp(runID string, d time.Duration) world.Message {
	return world.Message{RunID: runID, DeliverAt: time.Now().Add(d), DedupKey: runID + "/wake/1/0"}
}

// A schedule's name is the same for the same key and due time, differs
// otherwise, and is one the scheduler takes (at most 64 of [0-9A-Za-z._-])
// whatever the key holds.
func TestScheduleNames(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	key := strings.Repeat("run/ünïcode:", 40) + "/wake/3/0"
	valid := regexp.MustCompile(`^[0-9A-Za-z._-]{1,64}$`)
	for _, name := range []string{scheduleName(key, at), scheduleName("", at)} {
		if !valid.MatchString(name) {
			t.Errorf("schedule name %q is not one the scheduler takes", name)
		}
	}
	// Called twice on purpose: the name must not depend on anything but its arguments.
	if first, again := scheduleName(key, at), scheduleName(key, at); first != again {
		t.Error("one key and due time give two names: a redelivered suspension would make a second schedule")
	}
	if scheduleName(key, at) == scheduleName(key, at.Add(time.Second)) || scheduleName(key, at) == scheduleName(key+"x", at) {
		t.Error("another key or due time gives the same name: its wake-up would be dropped")
	}
	if first, second := scheduleName("", at), scheduleName("", at); first == second {
		t.Error("two messages without a key share a schedule name: one would be dropped")
	}
}

// A partial scheduler configuration is refused, naming what is missing.
func TestSchedulerOptionsAllOrNone(t *testing.T) {
	opts := Options{Table: "t", QueueURL: "q", Bucket: "b", Scheduler: SchedulerOptions{Group: "g"}}
	if _, err := New(aws.Config{}, opts); err == nil {
		t.Error("New with a group and no role or queue ARN: no error")
	}
	t.Setenv("WORKFLOW_TABLE", "t")
	t.Setenv("WORKFLOW_QUEUE_URL", "q")
	t.Setenv("WORKFLOW_BUCKET", "b")
	t.Setenv("WORKFLOW_SCHEDULE_GROUP", "g")
	_, err := OptionsFromEnv()
	if err == nil {
		t.Fatal("OptionsFromEnv with only WORKFLOW_SCHEDULE_GROUP: no error")
	}
	for _, name := range []string{"WORKFLOW_SCHEDULER_ROLE_ARN", "WORKFLOW_QUEUE_ARN"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	t.Setenv("WORKFLOW_SCHEDULER_ROLE_ARN", "arn:aws:iam::1:role/r")
	t.Setenv("WORKFLOW_QUEUE_ARN", "arn:aws:sqs:us-east-1:1:q")
	got, err := OptionsFromEnv()
	if err != nil || got.Scheduler != (SchedulerOptions{Group: "g", RoleARN: "arn:aws:iam::1:role/r", QueueARN: "arn:aws:sqs:us-east-1:1:q"}) {
		t.Errorf("OptionsFromEnv = %+v, %v", got.Scheduler, err)
	}
}

// WORKFLOW_SCHEDULE_AFTER_SECONDS lowers the delay beyond which messages
// go through the scheduler, never raises it past SQS's limit, and a value
// that is not a number of seconds is refused by name.
func TestScheduleAfterFromEnv(t *testing.T) {
	for name, value := range map[string]string{
		"WORKFLOW_TABLE": "t", "WORKFLOW_QUEUE_URL": "q", "WORKFLOW_BUCKET": "b", "WORKFLOW_SCHEDULE_GROUP": "g",
		"WORKFLOW_SCHEDULER_ROLE_ARN": "arn:aws:iam::1:role/r", "WORKFLOW_QUEUE_ARN": "arn:aws:sqs:us-east-1:1:q",
	} {
		t.Setenv(name, value)
	}
	for value, want := range map[string]time.Duration{"": maxDelay, "30": 30 * time.Second, "3600": maxDelay} {
		t.Setenv("WORKFLOW_SCHEDULE_AFTER_SECONDS", value)
		opts, err := OptionsFromEnv()
		if err != nil {
			t.Fatalf("WORKFLOW_SCHEDULE_AFTER_SECONDS=%q: %v", value, err)
		}
		w, err := New(aws.Config{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if w.delayLimit != want {
			t.Errorf("WORKFLOW_SCHEDULE_AFTER_SECONDS=%q: delay limit %v, want %v", value, w.delayLimit, want)
		}
	}
	t.Setenv("WORKFLOW_SCHEDULE_AFTER_SECONDS", "1m")
	if _, err := OptionsFromEnv(); err == nil || !strings.Contains(err.Error(), "WORKFLOW_SCHEDULE_AFTER_SECONDS") {
		t.Errorf("WORKFLOW_SCHEDULE_AFTER_SECONDS=1m: %v, want an error naming it", err)
	}
}
