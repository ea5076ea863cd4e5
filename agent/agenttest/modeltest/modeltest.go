// Package modeltest holds the tests every provider adapter of
// [agent.Model] must pass, run over the provider's real SDK client
// against a [fakeprovider.Server] that replays the provider's recorded
// responses: streamed text and tool calls map to deltas, errors are
// classified retryable or not, the SDK does not retry behind the step's
// back, and an agent run retried after a throttle is billed once per
// answer.
package modeltest

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
)

// The conversation the recorded replies answer: the user asks for the
// weather in two cities, the model calls the weather tool for both in one
// answer, and answers with FinalText once it has the results.
const (
	Prompt    = "What is the weather in Paris and Rome?"
	FinalText = "It is sunny in Paris and rainy in Rome."
)

// Provider is an adapter under test and its recorded replies.
type Provider struct {
	// Encoding is how the provider streams.
	Encoding fakeprovider.Encoding
	// New returns the adapter over the provider's SDK client, sending to
	// baseURL.
	New func(baseURL string) agent.Model
	// Text streams FinalText in more than one delta and stops, using
	// TextUsage.
	Text      fakeprovider.Reply
	TextUsage agent.Usage
	// ToolCalls calls the tool "weather" with {"city":"Paris"} and
	// {"city":"Rome"} in one answer, each input streamed in more than one
	// piece, using ToolUsage.
	ToolCalls fakeprovider.Reply
	ToolUsage agent.Usage
	// Throttle refuses a call with 429 and asks for a retry after
	// ThrottleDelay.
	Throttle      fakeprovider.Reply
	ThrottleDelay time.Duration
	// Errors are more failures the provider answers with, and how each
	// must be classified.
	Errors []ErrorCase
}

// ErrorCase is a failed call and whether the model call step must retry
// it.
type ErrorCase struct {
	Name  string
	Reply fakeprovider.Reply
	Retry bool
}

// Weather is the tool the recorded conversation calls.
var Weather = agent.NewTool("weather", "Today's weather in a city", func(_ context.Context, in struct {
	City string `json:"city" jsonschema:"the city"`
}, _ agent.ToolCallInfo) (string, error) {
	return map[string]string{"Paris": "sunny", "Rome": "rainy"}[in.City] + " in " + in.City, nil
})

// request is the call the stream tests make.
func request() agent.Request {
	return agent.Request{
		System:   "Be brief.",
		Messages: []agent.Message{agent.UserMessage(Prompt)},
		Tools:    []agent.ToolSpec{Weather.Spec()},
		Settings: agent.Settings{MaxTokens: 256},
	}
}

// Conversation is a request with every kind of message, for a provider's
// own test of how it encodes them: the system prompt, the user's question,
// an answer with text and a tool call (ID "call_1"), the call's result (a
// denial with code UNKNOWN_CITY), the user's next words, the weather
// tool, and every setting (100 tokens, temperature 0.2, stop at "END").
func Conversation() agent.Request {
	temp := 0.2
	return agent.Request{
		System: "Be brief.",
		Messages: []agent.Message{
			agent.UserMessage(Prompt),
			{Role: agent.RoleAssistant, Text: "Checking.", ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: agent.RoleTool, ToolResults: []agent.ToolResult{{CallID: "call_1", Name: "weather", Outcome: agent.Denied, Code: "UNKNOWN_CITY", Error: "no such city"}}},
			agent.UserMessage("And Rome?"),
		},
		Tools:    []agent.ToolSpec{Weather.Spec()},
		Settings: agent.Settings{MaxTokens: 100, Temperature: &temp, Stop: []string{"END"}},
	}
}
