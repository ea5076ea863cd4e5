package agent_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

type dateQuestion struct {
	Question string `json:"question" jsonschema:"what to ask the traveller"`
}

type dateAnswer struct {
	Date string `json:"date" jsonschema:"the travel date, YYYY-MM-DD"`
}

// Validate holds the answer to rules its schema cannot say.
func (a dateAnswer) Validate() error {
	_, err := time.Parse(time.DateOnly, a.Date)
	return err
}

var askDate = agent.NewInterrupt[dateQuestion, dateAnswer]("ask_date", "Ask the traveller for their travel date")

var asker = agent.New("test.asker", scripted, agent.WithInterrupts(askDate), agent.WithMaxInterrupts(2))

var ask = workflow.Define("agent.test.ask", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
	return asker.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
})

// TestModelChosenInterruptWaitsForAValidResponse: the model chooses the
// contract; the run waits on the hook named after the call's ID, which a
// UI finds from the stream's tool-call part; responses the contract
// refuses (by schema, by the type's Validate) are refused before anything
// is written and the hook stays open; a valid one reaches the model as
// the call's result and the Run's interrupt history.
func TestModelChosenInterruptWaitsForAValidResponse(t *testing.T) {
	model := script(agenttest.Answer("When?", agenttest.Call("call-ask-1", "ask_date", dateQuestion{"When do you fly?"})), agenttest.Answer("Booked for then."))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, ask, "book me a flight")
	env.RunUntilIdle()
	chosen := readUntil(t, run.Run, agent.PartToolCall)
	if chosen.Interrupt != "ask_date" || chosen.ToolCall.ID != "call-ask-1" {
		t.Fatalf("the stream shows %+v", chosen)
	}
	q, err := askDate.Request(t.Context(), env.Client, chosen.ToolCall.ID)
	if err != nil || q.Question != "When do you fly?" {
		t.Fatalf("request %+v, %v", q, err)
	}

	events := len(run.Events())
	for _, bad := range []json.RawMessage{[]byte(`{"date": 20270101}`), []byte(`{}`), []byte(`"tomorrow"`)} {
		if err := agent.RespondInterrupt(t.Context(), env.Client, "call-ask-1", bad); !errors.Is(err, agent.ErrInvalidResponse) {
			t.Errorf("response %s: %v, want ErrInvalidResponse", bad, err)
		}
	}
	if err := askDate.Respond(t.Context(), env.Client, "call-ask-1", dateAnswer{"next Tuesday"}); !errors.Is(err, agent.ErrInvalidResponse) {
		t.Errorf("a date Validate refuses: %v", err)
	}
	if err := agent.Approve(t.Context(), env.Client, "call-ask-1", agent.Approval{Approved: true}); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Errorf("an approval reached the interrupt: %v", err)
	}
	env.RunUntilIdle()
	if n := len(run.Events()); n != events || run.Status() != workflow.StatusRunning || model.Calls() != 1 {
		t.Fatalf("refused responses wrote %d events; status %s, %d model calls", n-events, run.Status(), model.Calls())
	}

	if err := askDate.Respond(t.Context(), env.Client, "call-ask-1", dateAnswer{"2027-01-04"}); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	want := agent.InterruptRecord{Interrupt: "ask_date", CallID: "call-ask-1", Request: []byte(`{"question":"When do you fly?"}`), Response: []byte(`{"date":"2027-01-04"}`)}
	if len(res.Interrupts) != 1 || fmt.Sprint(res.Interrupts[0]) != fmt.Sprint(want) || res.Text != "Booked for then." {
		t.Fatalf("interrupts %+v, text %q", res.Interrupts, res.Text)
	}
	second := model.Requests()[1]
	if r := second.Messages[len(second.Messages)-1].ToolResults[0]; r.Outcome != agent.Success || r.Content() != `{"date":"2027-01-04"}` {
		t.Fatalf("the model read %+v", r)
	}
	if len(second.Tools) != 1 || second.Tools[0].Name != "ask_date" {
		t.Fatalf("the model was offered %+v", second.Tools)
	}
}

// TestInterruptResponseThatSkipsTheCheckIsSkipped: a response sent with a
// plain ResumeHook, past RespondInterrupt's check, that the contract
// refuses does not reach the model; the interrupt waits for a valid one.
func TestInterruptResponseThatSkipsTheCheckIsSkipped(t *testing.T) {
	script(agenttest.Answer("", agenttest.Call("call-ask-2", "ask_date", dateQuestion{"When?"})), agenttest.Answer("ok"))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, ask, "fly")
	env.RunUntilIdle()
	token := agent.InterruptToken("call-ask-2")
	if err := workflow.ResumeHook(t.Context(), env.Client, token, dateAnswer{"soon"}); err != nil {
		t.Fatal(err)
	}
	env.RunUntilIdle()
	if run.Status() != workflow.StatusRunning {
		t.Fatalf("an invalid response ended the wait: %s", run.Status())
	}
	if err := workflow.ResumeHook(t.Context(), env.Client, token, dateAnswer{"2027-02-01"}); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Interrupts[0].Response); got != `{"date":"2027-02-01"}` {
		t.Fatalf("the interrupt took %s", got)
	}
}

// TestInterruptRequestsAreCheckedAndBounded: a request that does not
// match the contract is a fault the model reads (no hook is made), and
// past WithMaxInterrupts a request is denied.
func TestInterruptRequestsAreCheckedAndBounded(t *testing.T) {
	model := script(
		agenttest.Answer("", agenttest.Call("bad", "ask_date", map[string]int{"question": 1})),
		agenttest.Answer("", agenttest.Call("q1", "ask_date", dateQuestion{"1?"}), agenttest.Call("q2", "ask_date", dateQuestion{"2?"}), agenttest.Call("q3", "ask_date", dateQuestion{"3?"})),
		agenttest.Answer("done"))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, ask, "fly")
	env.RunUntilIdle()
	first := model.Requests()[1].Messages[2].ToolResults[0]
	if first.Outcome != agent.Fault {
		t.Fatalf("a malformed request gave %+v", first)
	}
	for _, id := range []string{"q1", "q2"} {
		if err := askDate.Respond(t.Context(), env.Client, id, dateAnswer{"2027-03-01"}); err != nil {
			t.Fatal(id, err)
		}
	}
	if err := askDate.Respond(t.Context(), env.Client, "q3", dateAnswer{"2027-03-01"}); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("the third interrupt has a hook: %v", err)
	}
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	third := res.Messages[4].ToolResults[2]
	if third.Outcome != agent.Denied || third.Code != agent.InterruptLimitCode || len(res.Interrupts) != 2 {
		t.Fatalf("the third interrupt gave %+v; %d answered", third, len(res.Interrupts))
	}
}

// readUntil reads the stream of a run still going up to the first part of
// type typ.
func readUntil(t *testing.T, run *workflow.Run[*agent.Result], typ agent.PartType) agent.Part {
	t.Helper()
	for p, err := range workflow.ReadStream[agent.Part](t.Context(), run, agent.DefaultNamespace, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Type == typ {
			return p
		}
	}
	t.Fatalf("the stream ended without a %s part", typ)
	return agent.Part{}
}
