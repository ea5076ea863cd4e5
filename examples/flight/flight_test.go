package flight_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// The booking end to end on the test clock: the session searches, holds
// and sleeps a day watching the price (skipped, not waited), then waits
// for the traveller's approval on the hook named by the book call's ID,
// books once it comes, and answers; every model call is billed once.
func TestBookingWatchesThePriceForADayAndWaitsForApproval(t *testing.T) {
	m := flight.Scripted().(*agenttest.Model)
	flight.UseModel(m)
	env := workflowtest.New(t)
	run := workflowtest.Start(env, flight.Session.Workflow(), chat.Turn{Messages: []agent.Message{
		agent.UserMessage("Book me SFO to JFK on Dec 24 under $400, for Ana Lima."),
	}})
	start := env.Now()
	env.RunUntilIdle()
	if _, err := env.Client.GetHook(t.Context(), flight.BookCall); err == nil {
		t.Fatal("the booking waits for approval before the price watch is over")
	}
	env.Advance(flight.PriceWatch)
	hook, err := env.Client.GetHook(t.Context(), flight.BookCall)
	if err != nil {
		t.Fatalf("after the watch no approval is asked for: %v", err)
	}
	var asked agent.ApprovalRequest
	if err := json.Unmarshal(hook.Metadata, &asked); err != nil || asked.Tool != "book_flight" || !strings.Contains(string(asked.Input), "289") {
		t.Fatalf("approval request %s, %v", hook.Metadata, err)
	}
	if m.Calls() != 3 {
		t.Fatalf("%d model calls before the approval, want 3", m.Calls())
	}

	if err := agent.Approve(t.Context(), env.Client, flight.BookCall, agent.Approval{Approved: true}); err != nil {
		t.Fatal(err)
	}
	env.RunUntilIdle()
	if err := flight.Session.Send(t.Context(), env.Client, run.ID, chat.Message{End: true}); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "CONF-UA415") || m.Calls() != 4 {
		t.Fatalf("answer %q after %d model calls", res.Text, m.Calls())
	}
	var booked agent.ToolResult
	for _, msg := range res.Messages {
		for _, r := range msg.ToolResults {
			if r.Name == "book_flight" {
				booked = r
			}
		}
	}
	if booked.Outcome != agent.Success || !strings.Contains(string(booked.Output), `"price":289`) {
		t.Fatalf("book_flight %+v", booked)
	}
	if waited := env.Now().Sub(start); waited < 24*time.Hour {
		t.Fatalf("the clock moved %v, not the day's watch", waited)
	}

	var parts []agent.Part
	r := must(workflow.GetRun[*agent.Result](t.Context(), env.Client, run.ID))
	for p, err := range workflow.ReadStream[agent.Part](t.Context(), r, flight.Assistant.Namespace(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	if text := agent.Text(parts); !strings.HasPrefix(text, "Let me look") || !strings.HasSuffix(text, "Have a good trip!") {
		t.Fatalf("streamed text %q", text)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
