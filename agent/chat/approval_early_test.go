package chat_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// awaitsApproval waits on the approval hook of the tool call it is given,
// as the agent loop does once the call's part is in the stream.
var awaitsApproval = workflow.Define("chat-test.awaitsApproval", func(ctx workflow.Context, callID string) (bool, error) {
	a, err := agent.Approvals.Create(ctx, workflow.WithToken(callID)).Receive(ctx)
	return a.Approved, err
})

// A UI may post its decision as soon as it sees the tool-call part, before
// the run waits on the call's hook: the route holds the decision until the
// hook exists instead of answering 404.
func TestApprovalPostedBeforeTheHookExistsLands(t *testing.T) {
	c, srv := serve(t, worlds["memory"](t))
	posted := make(chan *http.Response, 1)
	go func() {
		posted <- request(t, "POST", srv.URL+"/approvals/call-early", "", `{"approved":true}`)
	}()
	time.Sleep(200 * time.Millisecond) // the decision is in flight before the run exists
	run, err := workflow.Start(context.Background(), c, awaitsApproval, "call-early")
	if err != nil {
		t.Fatal(err)
	}
	if resp := <-posted; resp.StatusCode != http.StatusAccepted {
		t.Fatalf("approval posted early: status %d, want 202", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	approved, err := run.Result(ctx)
	if err != nil || !approved {
		t.Fatalf("run result %v, %v; want the early approval", approved, err)
	}
}
