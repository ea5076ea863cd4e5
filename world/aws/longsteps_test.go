package aws

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/worldtest/flowtest"
)

// newLongStepWorld is newTestWorld with a long-step queue beside its own.
func newLongStepWorld(t *testing.T) *World {
	return newTestWorldNamed(t, emulatorConfig(t), func(n *Names) { n.LongStepQueue = n.Queue + "-long" })
}

func longStepQueue(t *testing.T, w *World) *World {
	t.Helper()
	long, err := w.LongStepQueue()
	if err != nil {
		t.Fatal(err)
	}
	return long
}

// TestLongStepWorkers runs the mixed deployment on the AWS World, its
// long-step queue a second SQS queue.
func TestLongStepWorkers(t *testing.T) {
	emulatorConfig(t)
	flowtest.RunLongSteps(t, func(t *testing.T) world.World { return newLongStepWorld(t) },
		func(t *testing.T, w world.World) world.Queue { return longStepQueue(t, w.(*World)) })
}

// awsMarathon declares more than any invocation of a Lambda function may
// last.
var awsMarathon = workflow.DefineStep("aws.longsteps.marathon", func(context.Context, string) (string, error) {
	return "done", nil
}, workflow.WithTimeout(time.Hour))

var awsMarathonRun = workflow.Define("aws.longsteps.run", func(ctx workflow.Context, key string) (string, error) {
	return awsMarathon.Call(ctx, key)
})

// TestLongStepCalls counts the AWS calls of the mixed deployment: the
// invocation of a time-limited worker that hands a run to the long-step
// queue, the plain worker's delivery that runs the step and ends the run,
// and the plain worker's idle polling, which is SQS long polls of 20 s,
// not a busy loop.
func TestLongStepCalls(t *testing.T) {
	w := newLongStepWorld(t)
	long := longStepQueue(t, w)
	ctx := t.Context()
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsMarathonRun, "k")
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.Receive(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	short := workflow.NewWorker(w, workflow.WorkerOptions{MaxInvocation: 15 * time.Minute, LongStepQueue: long})
	w.ResetCalls()
	if err := short.Handle(ctx, first); err != nil {
		t.Fatal(err)
	}
	handOff := w.Calls()
	t.Logf("AWS calls of the invocation that hands the run to the long-step queue: %v", handOff)
	if handOff["SQS.SendMessage"] != 1 || handOff["DynamoDB.TransactWriteItems"] > 1 {
		t.Errorf("the hand-off made %v, want one message and at most one append", handOff)
	}

	plain := workflow.NewWorker(w, workflow.WorkerOptions{Queue: long})
	w.ResetCalls()
	d, err := long.Receive(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Handle(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, err := run.Result(ctx); err != nil || got != "done" {
		t.Fatalf("the run ended with %q, %v; want done", got, err)
	}
	ran := w.Calls()
	t.Logf("AWS calls of the plain worker's delivery that runs the step and ends the run: %v", ran)
	if ran["SQS.SendMessage"] != 0 {
		t.Errorf("the plain worker queued %d messages for a run it finished, want none", ran["SQS.SendMessage"])
	}

	// Idle: the long-step queue is empty; each receive is one long poll.
	// (A context without a deadline, as a serving worker's is: one with
	// a deadline ends in short polls for its last second.)
	const idle = 5 * time.Second
	w.ResetCalls()
	serving, stop := context.WithCancel(ctx)
	time.AfterFunc(idle, stop)
	if err := plain.Run(serving); err != nil {
		t.Fatal(err)
	}
	polls := w.Calls()["SQS.ReceiveMessage"]
	t.Logf("ReceiveMessage calls of an idle plain worker in %s: %d", idle, polls)
	if polls > 2 {
		t.Errorf("an idle plain worker polled %d times in %s, want at most 2: one 20 s long poll, cut short", polls, idle)
	}
}
