package openai

import (
	"cmp"
	"errors"

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

// Read implements agent.EventReader.
func (r *reader) Read(chunk sdk.ChatCompletionChunk) []agent.Delta {
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

// errTruncated is a stream that ended before its answer did; the step
// retries it.
var errTruncated = errors.New("openai: the stream ended before the answer did (the connection dropped?)")

// Finish implements agent.EventReader: the last delta, with what the
// stream's end told.
func (r *reader) Finish() (agent.Delta, error) {
	if r.finishReason == "" {
		return agent.Delta{}, errTruncated
	}
	return agent.Delta{Usage: r.usage, FinishReason: r.finishReason, Metadata: r.metadata}, nil
}

// finishReasons maps Chat Completions' finish reasons; any other is
// agent.FinishOther.
var finishReasons = map[string]agent.FinishReason{
	"stop":           agent.FinishStop,
	"length":         agent.FinishLength,
	"tool_calls":     agent.FinishToolCalls,
	"function_call":  agent.FinishToolCalls,
	"content_filter": agent.FinishFilter,
}

func finishReason(s string) agent.FinishReason {
	return cmp.Or(finishReasons[s], agent.FinishOther)
}
