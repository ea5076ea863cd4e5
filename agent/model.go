package agent

import (
	"context"
	"encoding/json"
	"iter"
)

// Model is a chat model that streams its answer. Packages agent/openai,
// agent/anthropic and agent/bedrock adapt the providers' SDKs to it; a
// test can use agenttest's scripted model.
//
// Stream sends the request and yields the answer as it arrives. It must
// not retry by itself once it has yielded a delta: the agent runs every
// call as a durable step, and the step's retry tells the stream's readers
// to start the call over (see [PartStart]).
type Model interface {
	Stream(ctx context.Context, req Request) iter.Seq2[Delta, error]
}

// Request is one model call: the conversation so far and the tools the
// model may call.
type Request struct {
	System   string     `json:"system,omitempty"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
	Settings Settings   `json:"settings,omitzero"`
}

// Settings are the options every provider understands. A provider that
// cannot honour one says so in the response's Warnings rather than
// ignoring it silently.
type Settings struct {
	MaxTokens   int      `json:"maxTokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"topP,omitempty"`
	Stop        []string `json:"stop,omitempty"`
}

// ToolSpec is a tool as the model sees it: a name, what it does, and the
// JSON schema of its input.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// FinishReason says why the model stopped, in the providers' shared terms.
type FinishReason string

// The finish reasons.
const (
	FinishStop      FinishReason = "stop"
	FinishLength    FinishReason = "length"
	FinishToolCalls FinishReason = "tool-calls"
	FinishFilter    FinishReason = "content-filter"
	FinishOther     FinishReason = "other"
	// FinishMaxSteps ends a Run that reached its step limit with tool
	// calls still to answer.
	FinishMaxSteps FinishReason = "max-steps"
)

// Delta is one piece of a streamed answer. A provider fills what its
// event carries; [Collect] assembles the pieces into a Response.
type Delta struct {
	Text string `json:"text,omitempty"`
	// ToolCall is a piece of a tool call: the first piece of a call has
	// its ID and Name, later ones add to its input.
	ToolCall *ToolCallDelta `json:"toolCall,omitempty"`
	// Usage is added to the response's (providers report it in pieces).
	Usage        *Usage       `json:"usage,omitempty"`
	FinishReason FinishReason `json:"finishReason,omitempty"`
	// Metadata is merged into the response's ProviderMetadata.
	Metadata map[string]any `json:"metadata,omitempty"`
	Warning  string         `json:"warning,omitempty"`
}

// ToolCallDelta is a piece of a tool call. Index tells the calls of one
// answer apart (providers stream several at once).
type ToolCallDelta struct {
	Index      int    `json:"index"`
	ID         string `json:"id,omitempty"`
	Name       string `json:"name,omitempty"`
	InputDelta string `json:"inputDelta,omitempty"`
}

// Response is a model call's result, as recorded in the run's log.
type Response struct {
	Message      Message      `json:"message"`
	Usage        Usage        `json:"usage"`
	FinishReason FinishReason `json:"finishReason"`
	// ProviderMetadata is what the provider reported that has no shared
	// field (response ID, model version, stop sequence, ...).
	ProviderMetadata map[string]any `json:"providerMetadata,omitempty"`
	Warnings         []string       `json:"warnings,omitempty"`
}
