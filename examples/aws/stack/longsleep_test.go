package stack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// scheduleAfter is the test stack's ScheduleAfterSeconds: timers further
// off than this go through the scheduler, so a test sees one fire.
const scheduleAfter = 5 * time.Second

// longSleep is a reminder run sleeping past the test stack's delay limit.
type longSleep struct {
	run   *workflow.Run[string]
	due   time.Time
	group string
	sched *scheduler.Client
}

// startLongSleep starts a reminder that sleeps past scheduleAfter and
// checks that its wake-up is one schedule in the stack's group, sent to the
// stack's queue as the stack's scheduler role.
func startLongSleep(t *testing.T, ctx context.Context, out map[string]string) *longSleep {
	t.Helper()
	cfg := emulator.Config()
	w, err := awsworld.New(cfg, awsworld.Options{Table: out["TableName"], QueueURL: out["QueueUrl"], Bucket: out["BucketName"]})
	if err != nil {
		t.Fatal(err)
	}
	const sleep = 3 * scheduleAfter
	run, err := workflow.Start(ctx, workflow.NewClient(w), lambdaapp.Reminder, lambdaapp.ReminderRequest{Note: "tea", AfterSeconds: int(sleep.Seconds())})
	if err != nil {
		t.Fatal(err)
	}
	s := &longSleep{run: run, due: time.Now().Add(sleep), group: out["ScheduleGroupName"], sched: scheduler.NewFromConfig(cfg)}
	var names []string
	waitFor(t, ctx, "the reminder's schedule", func() bool {
		names = s.schedules(t, ctx)
		return len(names) > 0
	})
	if len(names) != 1 {
		t.Fatalf("schedules %v in group %s, want the one wake-up", names, s.group)
	}
	got, err := s.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: &names[0], GroupName: &s.group})
	if err != nil {
		t.Fatal(err)
	}
	if arn := aws.ToString(got.Target.Arn); !strings.HasSuffix(arn, ":"+lastSegment(out["QueueUrl"])) {
		t.Errorf("the schedule targets %s, not the stack's queue %s", arn, out["QueueUrl"])
	}
	if role := aws.ToString(got.Target.RoleArn); !strings.Contains(role, "SchedulerRole") {
		t.Errorf("the schedule sends as %s, not the stack's SchedulerRole", role)
	}
	if expr := aws.ToString(got.ScheduleExpression); !strings.HasPrefix(expr, "at(") {
		t.Errorf("the schedule's expression is %s, want a one-time at()", expr)
	}
	return s
}

// finish waits for the reminder's result: it ran in the flow function
// after its due time, and its schedule deleted itself once it fired.
func (s *longSleep) finish(t *testing.T, ctx context.Context, flowFunction string) {
	t.Helper()
	got, err := s.run.Result(ctx)
	if err != nil {
		t.Fatalf("the reminder: %v", err)
	}
	if want := fmt.Sprintf("reminded of %q by %s", "tea", flowFunction); got != want {
		t.Errorf("the reminder's result %q, want %q", got, want)
	}
	if late := time.Since(s.due); late < 0 {
		t.Errorf("the reminder woke %v before it was due", -late)
	} else {
		t.Logf("the reminder's schedule fired; the run ended %v after it was due", late.Round(time.Second))
	}
	// The scheduler deletes a fired schedule after it has sent the
	// message, which the run may beat to its end: give it a few seconds.
	names := s.schedules(t, ctx)
	for wait := 250 * time.Millisecond; len(names) != 0 && wait <= 8*time.Second; wait *= 2 {
		time.Sleep(wait)
		names = s.schedules(t, ctx)
	}
	if len(names) != 0 {
		t.Errorf("schedules %v left in group %s after the wake-up", names, s.group)
	}
}

func (s *longSleep) schedules(t *testing.T, ctx context.Context) []string {
	t.Helper()
	list, err := s.sched.ListSchedules(ctx, &scheduler.ListSchedulesInput{GroupName: &s.group})
	if err != nil {
		t.Fatalf("schedules in group %s: %v", s.group, err)
	}
	var names []string
	for _, sc := range list.Schedules {
		names = append(names, aws.ToString(sc.Name))
	}
	return names
}

func lastSegment(url string) string { return url[strings.LastIndex(url, "/")+1:] }
