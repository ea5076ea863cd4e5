package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// accountCard streams: the model picks it with a brief, and a pass of
// its own writes the value.
type accountCard struct {
	Title    string   `json:"title" agent:"stream"`
	Accounts []string `json:"accounts" agent:"stream"`
}

func (c accountCard) Validate() error {
	if c.Title == "" {
		return errors.New("a card needs a title")
	}
	return nil
}

// badge does not stream: it is its control tool's input.
type badge struct {
	Label string `json:"label" jsonschema:"the badge's text"`
}

func (b badge) Validate() error {
	if b.Label == "" {
		return errors.New("a badge needs a label")
	}
	return nil
}

type summary struct {
	Total int `json:"total"`
}

var (
	cardOutput    = agent.EmitOutput[accountCard]("account_card", "Show the user's accounts as a card")
	badgeOutput   = agent.EmitOutput[badge]("badge", "Show a badge")
	summaryOutput = agent.ReturnOutput[summary]("summary", "End with the summary")

	routed     = &routingModel{}
	presenter  = agent.New("test.presenter", routed, agent.WithOutputs(cardOutput, badgeOutput, summaryOutput))
	presenting = workflow.Define("agent.test.presenting", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
		return presenter.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
	})
	cardOnly  = agent.New("test.cardonly", routed, agent.WithOutputs(cardOutput), agent.WithMaxSteps(2))
	showCards = workflow.Define("agent.test.showcards", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
		return cardOnly.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
	})
)

// routingModel answers an output's structured pass from pass and every
// other call from main.

// passAnswer scripts a pass's answer, whatever the conversation holds.
func passAnswer(json string) *agenttest.Model {
	a := chunked(json, 5)
	return agenttest.New(a, a, a, a)
}

type routingModel struct{ main, pass *agenttest.Model }

func (m *routingModel) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	if strings.Contains(req.System, "Answer with one JSON object") {
		return m.pass.Stream(ctx, req)
	}
	return m.main.Stream(ctx, req)
}

func (m *routingModel) calls() int { return m.main.Calls() + m.pass.Calls() }

// TestOutputContractsArriveBetweenTextAndEndTheRun: the model says a few
// words, picks the streamed card and the plain badge, talks about the
// card it was shown (the validated value is its tool result), forgets
// to finish and is reminded, then ends with the return contract. The
// card's fields stream in its own pass before its validated final, all
// between the two answers' text; the badge's final is written with the
// call; the pass counts as a model call in usage and responses.
func TestOutputContractsArriveBetweenTextAndEndTheRun(t *testing.T) {
	routed.main = agenttest.New(
		agenttest.Answer("Here are your accounts.", agenttest.Call("c-card", "account_card", map[string]string{"brief": "both accounts"}), agenttest.Call("c-badge", "badge", badge{"gold"})),
		agenttest.Answer("That card shows two accounts."),
		agenttest.Answer("", agenttest.Call("c-sum", "summary", summary{2})))
	routed.pass = passAnswer(`{"title": "Your accounts", "accounts": ["checking", "savings"]}`)
	env := workflowtest.New(t)
	run := workflowtest.Start(env, presenting, "show my accounts")
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Return == nil || res.Return.Output != "summary" || string(res.Return.Value) != `{"total":2}` || res.FinishReason != agent.FinishStop {
		t.Fatalf("return %+v, finish %s", res.Return, res.FinishReason)
	}
	var emitted []string
	for _, e := range res.Emissions {
		emitted = append(emitted, e.Output+"="+string(e.Value))
	}
	want := []string{`account_card={"title":"Your accounts","accounts":["checking","savings"]}`, `badge={"label":"gold"}`, `summary={"total":2}`}
	if !slices.Equal(emitted, want) {
		t.Fatalf("emissions %q", emitted)
	}
	cards, err := cardOutput.Values(res)
	if err != nil || len(cards) != 1 || !reflect.DeepEqual(cards[0], accountCard{"Your accounts", []string{"checking", "savings"}}) {
		t.Fatalf("cards %+v (%v)", cards, err)
	}
	if routed.calls() != 4 || len(res.Responses) != 4 || res.Usage.InputTokens != 4*agenttest.Usage.InputTokens {
		t.Fatalf("%d model calls, %d responses, usage %+v", routed.calls(), len(res.Responses), res.Usage)
	}
	second := routed.main.Requests()[1]
	if got := second.Messages[len(second.Messages)-1].ToolResults[0]; got.Outcome != agent.Success || !strings.Contains(string(got.Output), "savings") {
		t.Fatalf("the model was told %+v about its card", got)
	}
	third := routed.main.Requests()[2]
	if last := third.Messages[len(third.Messages)-1]; last.Role != agent.RoleUser || !strings.Contains(last.Text, "summary") {
		t.Fatalf("the answer without a return was not sent back with a reminder: %+v", last)
	}
	if pass := routed.pass.Requests()[0]; !strings.Contains(pass.Messages[len(pass.Messages)-1].Text, "both accounts") {
		t.Fatalf("the pass was not given the brief: %+v", pass.Messages)
	}

	parts := readAllParts(t, run.Run)
	at := func(match func(agent.Part) bool) int { return slices.IndexFunc(parts, match) }
	firstText := at(func(p agent.Part) bool { return p.Type == agent.PartTextDelta && strings.HasPrefix(p.Text, "Here") })
	laterText := at(func(p agent.Part) bool { return p.Type == agent.PartTextDelta && strings.HasPrefix(p.Text, "That") })
	cardUpdate := at(func(p agent.Part) bool {
		return p.Type == agent.PartData && p.Data.StreamID == "c-card" && p.Data.Kind != agent.DataFinal
	})
	cardFinal := at(func(p agent.Part) bool {
		return p.Type == agent.PartData && p.Data.StreamID == "c-card" && p.Data.Kind == agent.DataFinal
	})
	badgeFinal := at(func(p agent.Part) bool {
		return p.Type == agent.PartData && p.Data.StreamID == "c-badge" && p.Data.Kind == agent.DataFinal
	})
	cardCall := at(func(p agent.Part) bool { return p.Type == agent.PartToolCall && p.Output == "account_card" })
	if firstText < 0 || cardCall < firstText || badgeFinal < cardCall || cardUpdate < cardCall || cardFinal < cardUpdate || laterText < cardFinal {
		t.Fatalf("order: text %d, card call %d, badge final %d, card updates %d, card final %d, later text %d", firstText, cardCall, badgeFinal, cardUpdate, cardFinal, laterText)
	}
	before, err := agent.Objects(parts[:cardFinal])
	if err != nil || before["c-card"] == nil {
		t.Fatalf("before its final the client had %v (%v)", before["c-card"], err)
	}
	ends := 0
	for _, p := range parts {
		if p.Type == agent.PartFinish {
			ends++
		}
	}
	if last := parts[len(parts)-1]; last.Type != agent.PartFinish || ends != 1 {
		t.Fatalf("the stream ends with %+v after %d finish parts", last, ends)
	}
}

// TestInvalidOutputsAreFaultsTheModelHearsOf: a plain value its type
// refuses and a streamed pass whose object fails validation write no
// final part; each is a fault the model is told of, and the Run goes on.
// A streamed pass counts toward the step limit.
func TestInvalidOutputsAreFaultsTheModelHearsOf(t *testing.T) {
	routed.main = agenttest.New(
		agenttest.Answer("", agenttest.Call("c-bad-card", "account_card", map[string]string{}), agenttest.Call("c-bad-badge", "badge", badge{})),
		agenttest.Answer("Sorry.", agenttest.Call("c-sum-2", "summary", summary{0})))
	routed.pass = passAnswer(`{"title": "", "accounts": ["x"]}`)
	env := workflowtest.New(t)
	run := workflowtest.Start(env, presenting, "show")
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	told := routed.main.Requests()[1].Messages[2].ToolResults
	if len(told) != 2 || told[0].Outcome != agent.Fault || !strings.Contains(told[0].Error, "title") || told[1].Outcome != agent.Fault || !strings.Contains(told[1].Error, "label") {
		t.Fatalf("the model was told %+v", told)
	}
	if len(res.Emissions) != 1 || res.Return == nil {
		t.Fatalf("emissions %+v", res.Emissions)
	}
	for _, p := range readAllParts(t, run.Run) {
		if p.Type == agent.PartData && p.Data.Kind == agent.DataFinal && p.Data.StreamID != "c-sum-2" {
			t.Fatalf("an invalid value was written final: %s %s", p.Data.StreamID, p.Data.Value)
		}
	}

	routed.main = agenttest.New(agenttest.Answer("", agenttest.Call("c-card-3", "account_card", map[string]string{})))
	routed.pass = passAnswer(`{"title": "T", "accounts": []}`)
	limited, err := workflowtest.Start(env, showCards, "cards").Result()
	if err != nil {
		t.Fatal(err)
	}
	if limited.FinishReason != agent.FinishMaxSteps || routed.calls() != 2 {
		t.Fatalf("with 2 steps: finish %s after %d model calls", limited.FinishReason, routed.calls())
	}
	b, _ := json.Marshal(limited.Emissions)
	if !strings.Contains(string(b), `"title":"T"`) {
		t.Fatalf("emissions %s", b)
	}
}
