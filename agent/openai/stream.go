package openai

import (
	sdk "github.com/openai/openai-go/v3"

	"github.com/lambdaworkflow/workflow/agent"
)

// reader turns chunks into deltas, keeping the finish reason, usage and
// metadata for the last one: OpenAI sends usage in a last chunk of its
// own, after the one that finishes the choice.
type reader struct {
	finishReason agent.FinishReason
	usage        *agent.Usage
	metadata     map[string]any
}

func (r *reader) read(chunk sdk.ChatCompletionChunk) []agent.Delta {
	if r.metadata == nil {
		r.metadata = map[string]any{"id": chunk.ID, "model": chunk.Model}
	}
	if chunk.ServiceTier != "" {
		r.metadata["serviceTier"] = string(chunk.ServiceTier)
	}
	if chunk.JSON.Usage.Valid() {
		u := chunk.Usage
		r.usage = &agent.Usage{
			InputTokens:       int(u.PromptTokens),
			OutputTokens:      int(u.CompletionTokens),
			CachedInputTokens: int(u.PromptTokensDetails.CachedTokens),
		}
	}
	var deltas []agent.Delta
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue // the request asks for one choice
		}
		if text := choice.Delta.Content + choice.Delta.Refusal; text != "" {
			deltas = append(deltas, agent.Delta{Text: text})
		}
		if choice.Delta.Refusal != "" {
			r.metadata["refusal"] = true
		}
		for _, tc := range choice.Delta.ToolCalls {
			deltas = append(deltas, agent.Delta{ToolCall: &agent.ToolCallDelta{
				Index: int(tc.Index), ID: tc.ID, Name: tc.Function.Name, InputDelta: tc.Function.Arguments,
			}})
		}
		if choice.FinishReason != "" {
			r.finishReason = finishReason(choice.FinishReason)
		}
	}
	return deltas
}

// finish is the last delta: what the stream's end told.
func (r *reader) finish() agent.Delta {
	return agent.Delta{Usage: r.usage, FinishReason: r.finishReason, Metadata: r.metadata}
}

func finishReason(s string) agent.FinishReason {
	switch s {
	case "stop":
		return agent.FinishStop
	case "length":
		return agent.FinishLength
	case "tool_calls", "function_call":
		return agent.FinishToolCalls
	case "content_filter":
		return agent.FinishFilter
	}
	return agent.FinishOther
}
