package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	awsrig "github.com/lambdaworkflow/workflow/internal/testrig/awsworld"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// TestApprovalWaitCostsNoCallsOnAWS: on the AWS World (MiniStack), once
// the call that needs approval waits on its hook, the run makes no AWS
// call at all: no read, no write, no queued wake-up, so waiting a day
// costs what waiting a second does (TestApprovalWaitsDaysWithoutCostAndResumesOnTheHook
// skips the days on a fake clock). The only calls while it waits are the
// idle worker's long polls of its queue, which it makes with or without
// the run. The approval then resumes it.
func TestApprovalWaitCostsNoCallsOnAWS(t *testing.T) {
	w, _, _ := awsrig.New(t, "wf-agent-", aws.Names{})
	model := script(agenttest.Answer("Booking.", agenttest.Call("call-book-aws", "book", map[string]string{"Flight": "UA9"})), agenttest.Answer("Booked."))
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	worker := workflow.NewWorker(lateRelease{w}, workflow.WorkerOptions{})
	go func() { served <- worker.Run(ctx) }()
	defer func() { stop(); <-served }()

	c := workflow.NewClient(w)
	run, err := workflow.Start(t.Context(), c, converse, "book UA9")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := c.GetHook(t.Context(), "call-book-aws"); err == nil {
			break
		} else if !errors.Is(err, workflow.ErrHookNotFound) || time.Now().After(deadline) {
			t.Fatalf("the approval hook: %v", err)
		}
	}
	// The invocation that created the hook still releases its lease,
	// checks the run's inbox and acknowledges its message: wait until it
	// has ended (a second with no call proves nothing when a call takes
	// longer), then measure.
	for deadline := time.Now().Add(30 * time.Second); worker.Busy() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the invocation that created the hook never ended")
		}
	}
	w.ResetCalls()
	time.Sleep(3 * time.Second)
	if calls := runCalls(w.Calls()); len(calls) > 0 {
		t.Errorf("while the run waited for approval it made %v", calls)
	}
	if model.Calls() != 1 {
		t.Fatalf("%d model calls before the approval", model.Calls())
	}

	w.ResetCalls()
	if err := agent.Approve(t.Context(), c, "call-book-aws", agent.Approval{Approved: true}); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Booked." || model.Calls() != 2 {
		t.Fatalf("text %q after %d model calls", res.Text, model.Calls())
	}
	t.Logf("the approval and the rest of the run cost %v", w.Calls())
}

// runCalls drops the idle worker's long polls of its queue from calls.
func runCalls(calls map[string]int64) map[string]int64 {
	delete(calls, "SQS.ReceiveMessage")
	return calls
}

// lateRelease is an AWS World whose lease releases start late, as on a
// loaded machine where the call before them takes its time: the
// invocation that made the hook goes on calling after a second with
// none.
type lateRelease struct{ *aws.World }

func (l lateRelease) ReleaseLease(ctx context.Context, runID string, release world.Release) (int64, error) {
	time.Sleep(1500 * time.Millisecond)
	return l.World.ReleaseLease(ctx, runID, release)
}
