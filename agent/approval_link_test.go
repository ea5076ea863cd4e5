package agent_test

import (
	"context"
	"errors"
	"net/http"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// sentLinks are the approval links bookLinked's calls sent, by call ID.
var sentLinks sync.Map

// bookLinked needs approval, asked for by a link that expires in a day.
var bookLinked = agent.NewTool("book_linked", "Book a flight", func(ctx context.Context, in struct{ Flight string }, call agent.ToolCallInfo) (string, error) {
	return "booked " + in.Flight, nil
}, agent.ApprovalByLink(func(ctx context.Context, call agent.ToolCall, url string) error {
	sentLinks.Store(call.ID, url)
	return nil
}, 24*time.Hour))

var (
	linkAssistant = agent.New("test.link", scripted, agent.WithTools(bookLinked))
	linkConverse  = workflow.Define("agent.test.link", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
		return linkAssistant.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
	})
)

// linkToken starts a run whose call callID waits on its link, and returns
// the run and the link's webhook token.
func linkToken(t *testing.T, env *workflowtest.Env, callID string) (*workflowtest.Run[*agent.Result], string) {
	t.Helper()
	script(agenttest.Answer("", agenttest.Call(callID, "book_linked", map[string]string{"Flight": "UA1"})), agenttest.Answer("Done."))
	run := workflowtest.Start(env, linkConverse, "book")
	env.RunUntilIdle()
	u, ok := sentLinks.Load(callID)
	if !ok {
		t.Fatal("no approval link was sent")
	}
	return run, path.Base(u.(string))
}

// TestApprovalLinkIgnoresWhatDoesNotDecideAndExpires: requests to the
// link that the webhook route records but that are no decision (a GET, as
// a mail scanner sends; a form without a decision) leave the call
// waiting; a day later the link expires, the call is denied with
// APPROVAL_EXPIRED and the link is gone.
func TestApprovalLinkIgnoresWhatDoesNotDecideAndExpires(t *testing.T) {
	env := workflowtest.New(t)
	run, token := linkToken(t, env, "call-link-expire")
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for _, req := range []workflow.WebhookRequest{{Method: "GET"}, {Method: "POST", Header: form, Body: []byte("decision=maybe")}, {Method: "POST", Header: form, Body: []byte("%zz")}} {
		if _, err := env.Client.ResumeWebhook(t.Context(), token, req); err != nil {
			t.Fatalf("%s %q: %v", req.Method, req.Body, err)
		}
	}
	env.RunUntilIdle()
	env.Advance(23 * time.Hour)
	if s := run.Status(); s != workflow.StatusRunning {
		t.Fatalf("after requests that decide nothing, the run is %s", s)
	}
	env.Advance(2 * time.Hour)
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Messages[2].ToolResults[0]; r.Outcome != agent.Denied || r.Code != agent.ApprovalExpiredCode {
		t.Fatalf("result %+v", r)
	}
	if _, err := env.Client.ResumeWebhook(t.Context(), token, workflow.WebhookRequest{Method: "POST", Header: form, Body: []byte("decision=approve")}); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("the expired link took a POST: %v", err)
	}
}

// TestApprovalOnTheHookRetiresTheLink: a decision sent to the call's hook
// (agent.Approve, as a UI does) decides; the link is then gone.
func TestApprovalOnTheHookRetiresTheLink(t *testing.T) {
	env := workflowtest.New(t)
	run, token := linkToken(t, env, "call-link-hook")
	if err := agent.Approve(t.Context(), env.Client, "call-link-hook", agent.Approval{Approved: true}); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Messages[2].ToolResults[0]; r.Outcome != agent.Success {
		t.Fatalf("result %+v", r)
	}
	if _, err := env.Client.GetHook(t.Context(), token); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("the link outlived the decision: %v", err)
	}
}
