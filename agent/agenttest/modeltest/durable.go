package modeltest

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// current is the adapter the durable test's agent calls: an agent is
// defined once, at package level, and each test sets its model.
var current agent.Model

type currentModel struct{}

func (currentModel) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	return current.Stream(ctx, req)
}

var assistant = agent.New("modeltest.assistant", currentModel{}, agent.WithSystem("Be brief."), agent.WithTools(Weather))

var converse = workflow.Define("modeltest.converse", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
	return assistant.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
})

// testDurable runs the conversation as a workflow: the first model call
// is throttled and retried by its step after the provider's delay, the
// tools run, the second call answers. The provider bills two answers, and
// replaying the run's log calls it no more.
func testDurable(t *testing.T, p Provider) {
	srv := fakeprovider.Start(t, p.Encoding, p.Throttle, p.ToolCalls, p.Text)
	env := workflowtest.New(t)
	start := env.Now()
	run, res := RunAgent(t, env, p.New(srv.URL))
	if res.Text != FinalText || res.Usage != p.ToolUsage.Add(p.TextUsage) || len(res.Responses) != 2 {
		t.Fatalf("result %q, usage %+v after %d responses\n%s", res.Text, res.Usage, len(res.Responses), run.Timeline())
	}
	if waited := env.Now().Sub(start); waited < p.ThrottleDelay {
		t.Errorf("the retry came %s after the throttle, which asked for %s", waited, p.ThrottleDelay)
	}
	results := res.Messages[2].ToolResults
	if len(results) != 2 || results[0].Outcome != agent.Success || results[1].Outcome != agent.Success {
		t.Fatalf("tool results %+v", results)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || srv.Billed() != 2 {
		t.Fatalf("%d requests, %d billed; want 3 and 2 (a throttle, two answers)", len(reqs), srv.Billed())
	}
	// The second call told the model the calls and their results.
	for _, want := range []string{results[0].CallID, results[1].CallID, "sunny in Paris", "rainy in Rome"} {
		if !strings.Contains(string(reqs[2].Body), want) {
			t.Errorf("the second call's request does not hold %q: %s", want, reqs[2].Body)
		}
	}
	parts := readParts(t, run.Run)
	first := parts[0].Call
	starts := 0
	for _, part := range parts {
		if part.Type == agent.PartStart && part.Call == first {
			starts++
		}
	}
	if starts != 2 {
		t.Errorf("the throttled call started %d times on the stream, want 2", starts)
	}
	if got, want := agent.Text(parts), res.Responses[0].Message.Text+FinalText; got != want {
		t.Errorf("a client shows %q, want %q", got, want)
	}
	workflowtest.Replay(t, run.Events())
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("replaying the log called the provider %d more time(s)", n-3)
	}
}

// RunAgent runs an agent on model, with the Weather tool, asked Prompt
// in a workflow on env, and returns the run and its result.
func RunAgent(t *testing.T, env *workflowtest.Env, model agent.Model) (*workflowtest.Run[*agent.Result], *agent.Result) {
	t.Helper()
	current = model
	run := workflowtest.Start(env, converse, Prompt)
	res, err := run.Result()
	if err != nil {
		t.Fatalf("%v\n%s", err, run.Timeline())
	}
	return run, res
}

func readParts(t *testing.T, run *workflow.Run[*agent.Result]) []agent.Part {
	t.Helper()
	var parts []agent.Part
	for p, err := range workflow.ReadStream[agent.Part](t.Context(), run, assistant.Namespace(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	return parts
}
