package workflowtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

var sendEmail = workflow.DefineStep("wt.email", func(ctx context.Context, to string) (string, error) {
	return "", errors.New("the real mail server is not reachable from tests")
})

var reminder = workflow.Define("wt.reminder", func(ctx workflow.Context, to string) (string, error) {
	workflow.Sleep(ctx, 7*24*time.Hour)
	h := workflow.CreateHook[string](ctx, workflow.WithToken("unsubscribe:"+to))
	if workflow.Select(ctx, h, workflow.After(ctx, 24*time.Hour)) == 0 {
		return "unsubscribed", nil
	}
	return sendEmail.Call(ctx, to)
})

func TestReplacedStepAndSkippedWeek(t *testing.T) {
	var sentTo string
	env := workflowtest.New(t, workflowtest.Replace(sendEmail.Replace(func(ctx context.Context, to string) (string, error) {
		sentTo = to
		return "queued", nil
	})))
	start := env.Now()
	got, err := workflowtest.Start(env, reminder, "ada@example.com").Result()
	if err != nil || got != "queued" || sentTo != "ada@example.com" {
		t.Fatalf("got %q, %v; fake saw %q", got, err, sentTo)
	}
	if passed := env.Now().Sub(start); passed < 8*24*time.Hour {
		t.Fatalf("the clock moved %v, want the 8 days the workflow waited", passed)
	}
}

func TestResumeHookWhileTheRunWaits(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, reminder, "grace@example.com")
	env.Advance(7 * 24 * time.Hour) // the week passes; the run now waits on the hook and the day-long timer
	if err := workflow.ResumeHook(context.Background(), env.Client, "unsubscribe:grace@example.com", "please"); err != nil {
		t.Fatal(err)
	}
	got, err := run.Result()
	if err != nil || got != "unsubscribed" {
		t.Fatalf("got %q, %v\n%s", got, err, run.Timeline())
	}
	if tl := run.Timeline(); !strings.Contains(tl, "hook_received") || !strings.Contains(tl, "wait_completed") {
		t.Fatalf("timeline lacks the resume or the week's timer:\n%s", tl)
	}
}

var waitsForever = workflow.Define("wt.forever", func(ctx workflow.Context, _ struct{}) (int, error) {
	return workflow.CreateHook[int](ctx).Receive(ctx)
})

func TestResultSaysWhenNothingCanHappen(t *testing.T) {
	env := workflowtest.New(t)
	_, err := workflowtest.Start(env, waitsForever, struct{}{}).Result()
	if err == nil || !strings.Contains(err.Error(), "waits for a hook") {
		t.Fatalf("err = %v, want an explanation that the run is blocked", err)
	}
}
