package agent_test

import (
	"context"
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

type cityInput struct {
	City string `json:"city" jsonschema:"the city to look up"`
}

// weather is a step-level tool.
var weather = agent.NewTool("weather", "Today's weather in a city", func(ctx context.Context, in cityInput, call agent.ToolCallInfo) (string, error) {
	switch in.City {
	case "Atlantis":
		return "", agent.Deny("UNKNOWN_CITY", "no such city")
	case "Gotham":
		return "", workflow.Fatal(errors.New("the weather service is down"))
	}
	return "sunny in " + in.City, nil
})

// pause is a workflow-level tool: it sleeps, which only workflow code may.
var pause = agent.NewWorkflowTool("pause", "Wait a while", func(ctx workflow.Context, in struct{ Hours int }, call agent.ToolCallInfo) (string, error) {
	workflow.Sleep(ctx, time.Duration(in.Hours)*time.Hour)
	return fmt.Sprintf("waited %dh, told %d messages", in.Hours, len(call.Messages)), nil
})

// book needs a person's approval.
var book = agent.NewTool("book", "Book a flight", func(ctx context.Context, in struct{ Flight string }, call agent.ToolCallInfo) (string, error) {
	return "booked " + in.Flight, nil
}, agent.NeedsApproval())

// scripted is the model every test's agent uses; each test sets its
// answers before it starts a run.
var scripted = &switchModel{}

type switchModel struct{ *agenttest.Model }

var assistant = agent.New("test.assistant", scripted, agent.WithSystem("Be brief."), agent.WithTools(weather, pause, book), agent.WithMaxSteps(4))

var converse = workflow.Define("agent.test.converse", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
	return assistant.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
})

func script(answers ...[]agent.Delta) *agenttest.Model {
	scripted.Model = agenttest.New(answers...)
	return scripted.Model
}

func TestLoopRunsToolsInParallelAndAccumulatesUsage(t *testing.T) {
	model := script(
		agenttest.Answer("Let me check.",
			agenttest.Call("c1", "weather", cityInput{"Paris"}),
			agenttest.Call("c2", "weather", cityInput{"Atlantis"}),
			agenttest.Call("c3", "weather", cityInput{"Gotham"}),
			agenttest.Call("c4", "nope", struct{}{}),
			agenttest.Call("c5", "weather", map[string]int{"city": 3})),
		agenttest.Answer("Paris is sunny."),
	)
	env := workflowtest.New(t)
	run := workflowtest.Start(env, converse, "weather?")
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Paris is sunny." || res.FinishReason != agent.FinishStop {
		t.Fatalf("result %q, %s", res.Text, res.FinishReason)
	}
	if want := agenttest.Usage.Add(agenttest.Usage); res.Usage != want {
		t.Fatalf("usage %+v, want %+v", res.Usage, want)
	}
	if model.Calls() != 2 {
		t.Fatalf("the model was called %d times, want 2", model.Calls())
	}
	results := res.Messages[2].ToolResults
	want := []struct {
		outcome agent.Outcome
		code    string
	}{{agent.Success, ""}, {agent.Denied, "UNKNOWN_CITY"}, {agent.Fault, ""}, {agent.Fault, ""}, {agent.Fault, ""}}
	for i, w := range want {
		if results[i].Outcome != w.outcome || results[i].Code != w.code {
			t.Errorf("result %d: %+v, want %s %s", i, results[i], w.outcome, w.code)
		}
	}
	if string(results[0].Output) != `"sunny in Paris"` || results[2].Error != "the weather service is down" {
		t.Errorf("results %+v", results)
	}
	// The second call told the model every result, and the stream shows them.
	second := model.Requests()[1]
	if got := len(second.Messages[len(second.Messages)-1].ToolResults); got != 5 || second.System != "Be brief." || len(second.Tools) != 3 {
		t.Errorf("the second request had %d results, system %q, %d tools", got, second.System, len(second.Tools))
	}
	parts := readParts(t, run.Run, 0)
	if n := countParts(parts, agent.PartToolResult); n != 5 {
		t.Errorf("the stream shows %d tool results, want 5", n)
	}
	if last := parts[len(parts)-1]; last.Type != agent.PartFinish {
		t.Errorf("the stream ends with %+v, want a finish part", last)
	}
}

func TestToolSchemaComesFromTheInputType(t *testing.T) {
	var schema struct {
		Type       string
		Properties map[string]struct{ Type, Description string }
		Required   []string
	}
	if err := json.Unmarshal(weather.Spec().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	city := schema.Properties["city"]
	if schema.Type != "object" || city.Type != "string" || city.Description != "the city to look up" || len(schema.Required) != 1 {
		t.Fatalf("schema %s", weather.Spec().InputSchema)
	}
}

func TestWorkflowToolSleepsAndSeesTheMessages(t *testing.T) {
	script(agenttest.Answer("", agenttest.Call("p1", "pause", map[string]int{"Hours": 30})), agenttest.Answer("Done waiting."))
	env := workflowtest.New(t)
	start := env.Now()
	res, err := workflowtest.Start(env, converse, "wait").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Messages[2].ToolResults[0].Output); got != `"waited 30h, told 2 messages"` {
		t.Fatalf("the tool said %s", got)
	}
	if env.Now().Sub(start) < 30*time.Hour {
		t.Fatalf("the clock moved %s, the tool slept 30h", env.Now().Sub(start))
	}
}

func TestMaxStepsEndsTheLoop(t *testing.T) {
	call := agenttest.Answer("again", agenttest.Call("x", "weather", cityInput{"Paris"}))
	model := script(call, call, call, call, call, call)
	env := workflowtest.New(t)
	run := workflowtest.Start(env, converse, "loop")
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != agent.FinishMaxSteps || model.Calls() != 4 || len(res.Responses) != 4 {
		t.Fatalf("finish %s after %d calls", res.FinishReason, model.Calls())
	}
	parts := readParts(t, run.Run, 0)
	if last := parts[len(parts)-1]; last.Type != agent.PartFinish || last.FinishReason != agent.FinishMaxSteps {
		t.Fatalf("the stream ends with %+v", last)
	}
}

func TestRetriedModelCallRestreamsUnderAStartMarker(t *testing.T) {
	model := script(agenttest.Answer("one two three four"))
	model.FailNext(errors.New("connection reset"))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, converse, "hi")
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "one two three four" || model.Calls() != 2 {
		t.Fatalf("text %q after %d calls", res.Text, model.Calls())
	}
	parts := readParts(t, run.Run, 0)
	if starts := countParts(parts, agent.PartStart); starts != 2 || parts[0].Call != parts[len(parts)-1].Call {
		t.Fatalf("%d start parts: %+v", starts, parts)
	}
	// A client that drops a call's parts on its second start shows the
	// text once.
	if got := agent.Text(parts); got != "one two three four" {
		t.Fatalf("the client shows %q", got)
	}
}

func readParts(t *testing.T, run *workflow.Run[*agent.Result], from int64) []agent.Part {
	t.Helper()
	var parts []agent.Part
	for p, err := range workflow.ReadStream[agent.Part](t.Context(), run, agent.DefaultNamespace, from) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	return parts
}

func countParts(parts []agent.Part, typ agent.PartType) int {
	n := 0
	for _, p := range parts {
		if p.Type == typ {
			n++
		}
	}
	return n
}
