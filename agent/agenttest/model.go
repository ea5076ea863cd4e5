// Package agenttest has a scripted [agent.Model] for tests and examples:
// it streams canned answers, counts the calls it is billed for, and fails
// on demand.
package agenttest

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"

	"github.com/lambdaworkflow/workflow/agent"
)

// Model answers each call with the next of its scripted answers, chosen
// by how many answers the conversation already holds, so a retried call
// gets the same answer again. Past the script it answers "done".
type Model struct {
	answers [][]agent.Delta

	mu       sync.Mutex
	calls    int
	failures []error
	requests []agent.Request
}

// New returns a model that gives the answers in turn.
func New(answers ...[]agent.Delta) *Model { return &Model{answers: answers} }

// Usage is what every scripted answer reports.
var Usage = agent.Usage{InputTokens: 10, OutputTokens: 5}

// Answer scripts an answer: text streamed a word at a time, then tool
// calls with their input streamed in two pieces. input values are encoded
// as JSON.
func Answer(text string, calls ...agent.ToolCall) []agent.Delta {
	var ds []agent.Delta
	for _, w := range strings.SplitAfter(text, " ") {
		if w != "" {
			ds = append(ds, agent.Delta{Text: w})
		}
	}
	reason := agent.FinishStop
	for i, c := range calls {
		in := string(c.Input)
		half := len(in) / 2
		ds = append(ds,
			agent.Delta{ToolCall: &agent.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, InputDelta: in[:half]}},
			agent.Delta{ToolCall: &agent.ToolCallDelta{Index: i, InputDelta: in[half:]}})
		reason = agent.FinishToolCalls
	}
	u := Usage
	return append(ds, agent.Delta{Usage: &u, FinishReason: reason, Metadata: map[string]any{"agenttest": true}})
}

// Call is a tool call for Answer.
func Call(id, name string, input any) agent.ToolCall {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return agent.ToolCall{ID: id, Name: name, Input: b}
}

// FailNext makes the next calls fail with errs, one each, after
// streaming half of their answer.
func (m *Model) FailNext(errs ...error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures = append(m.failures, errs...)
}

// Calls returns how many times the model was called: what a provider
// would bill.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// Requests returns every request the model got.
func (m *Model) Requests() []agent.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agent.Request(nil), m.requests...)
}

// Stream implements agent.Model.
func (m *Model) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	m.mu.Lock()
	m.calls++
	m.requests = append(m.requests, req)
	var fail error
	if len(m.failures) > 0 {
		fail, m.failures = m.failures[0], m.failures[1:]
	}
	m.mu.Unlock()
	answer := m.answerFor(req)
	return func(yield func(agent.Delta, error) bool) {
		for i, d := range answer {
			if fail != nil && i == len(answer)/2 {
				yield(agent.Delta{}, fail)
				return
			}
			if ctx.Err() != nil {
				yield(agent.Delta{}, ctx.Err())
				return
			}
			if !yield(d, nil) {
				return
			}
		}
	}
}

func (m *Model) answerFor(req agent.Request) []agent.Delta {
	n := 0
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleAssistant {
			n++
		}
	}
	if n < len(m.answers) {
		return m.answers[n]
	}
	return Answer("done")
}
