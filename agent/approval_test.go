package agent_test

import (
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// TestApprovalWaitsDaysWithoutCostAndResumesOnTheHook: the call waits on
// the hook named by its ID; three days pass with no model call and no
// tool run; the approval (with an edited input) resumes the loop, and the
// model is billed once per answer across every replay.
func TestApprovalWaitsDaysWithoutCostAndResumesOnTheHook(t *testing.T) {
	model := script(agenttest.Answer("Booking.", agenttest.Call("call-book-1", "book", map[string]string{"Flight": "UA1"})), agenttest.Answer("Booked."))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, converse, "book UA1")
	env.RunUntilIdle()
	env.Advance(72 * time.Hour)
	if s := run.Status(); s != workflow.StatusRunning || model.Calls() != 1 {
		t.Fatalf("after 3 days: status %s, %d model calls", s, model.Calls())
	}
	if err := agent.Approve(t.Context(), env.Client, "call-book-1", agent.Approval{Approved: true, Input: []byte(`{"Flight":"UA2"}`)}); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Messages[2].ToolResults[0].Output); got != `"booked UA2"` || res.Text != "Booked." {
		t.Fatalf("result %s, text %q", got, res.Text)
	}
	if model.Calls() != 2 {
		t.Fatalf("the model was billed %d times for 2 answers", model.Calls())
	}
}

func TestRefusedApprovalIsADenial(t *testing.T) {
	script(agenttest.Answer("", agenttest.Call("call-book-2", "book", map[string]string{"Flight": "UA1"})), agenttest.Answer("Not booked."))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, converse, "book")
	env.RunUntilIdle()
	if err := agent.Approve(t.Context(), env.Client, "call-book-2", agent.Approval{Comment: "too dear"}); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	r := res.Messages[2].ToolResults[0]
	if r.Outcome != agent.Denied || r.Code != agent.NotApprovedCode || r.Error != "too dear" {
		t.Fatalf("result %+v", r)
	}
}
