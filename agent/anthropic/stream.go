package anthropic

import (
	"cmp"
	"errors"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/lambdaworkflow/workflow/agent"
)

// reader turns Messages stream events
// (https://docs.claude.com/en/docs/build-with-claude/streaming) into
// deltas, keeping the stop reason, usage and metadata for the last one.
type reader struct {
	stopped      bool // message_stop came
	finishReason agent.FinishReason
	usage        agent.Usage
	metadata     map[string]any
	warned       bool // that thinking is not kept
}

// Read implements agent.EventReader.
func (r *reader) Read(e sdk.MessageStreamEventUnion) []agent.Delta {
	switch e.Type {
	case "message_start":
		r.metadata = map[string]any{"id": e.Message.ID, "model": string(e.Message.Model)}
		u := e.Message.Usage
		r.setInput(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
		r.usage.OutputTokens = int(u.OutputTokens)
	case "content_block_start":
		if b := e.ContentBlock; b.Type == "tool_use" {
			return []agent.Delta{{ToolCall: &agent.ToolCallDelta{Index: int(e.Index), ID: b.ID, Name: b.Name}}}
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			return []agent.Delta{{Text: e.Delta.Text}}
		case "input_json_delta":
			return []agent.Delta{{ToolCall: &agent.ToolCallDelta{Index: int(e.Index), InputDelta: e.Delta.PartialJSON}}}
		case "thinking_delta":
			if !r.warned {
				r.warned = true
				return []agent.Delta{{Warning: "anthropic: the model's thinking is not kept"}}
			}
		}
	case "message_delta":
		r.finishReason = finishReason(e.Delta.StopReason)
		if e.Delta.StopSequence != "" {
			r.metadata["stopSequence"] = e.Delta.StopSequence
		}
		// message_delta's counts are cumulative; input counts come in it
		// only on some models.
		u := e.Usage
		r.usage.OutputTokens = int(u.OutputTokens)
		if u.InputTokens > 0 {
			r.setInput(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
		}
	case "message_stop":
		r.stopped = true
	}
	return nil
}

// setInput counts the input: Anthropic counts cached input apart,
// agent.Usage counts it in.
func (r *reader) setInput(input, cacheRead, cacheWrite int64) {
	r.usage.InputTokens = int(input + cacheRead + cacheWrite)
	r.usage.CachedInputTokens = int(cacheRead)
}

// errTruncated is a stream that ended before its message did; the step
// retries it.
var errTruncated = errors.New("anthropic: the stream ended before the message did (the connection dropped?)")

// Finish implements agent.EventReader: the last delta, with what the
// stream's end told.
func (r *reader) Finish() (agent.Delta, error) {
	if !r.stopped {
		return agent.Delta{}, errTruncated
	}
	return agent.Delta{Usage: &r.usage, FinishReason: r.finishReason, Metadata: r.metadata}, nil
}

// finishReasons maps the Messages API's stop reasons; any other (such
// as pause_turn) is agent.FinishOther.
var finishReasons = map[sdk.StopReason]agent.FinishReason{
	sdk.StopReasonEndTurn:      agent.FinishStop,
	sdk.StopReasonStopSequence: agent.FinishStop,
	sdk.StopReasonMaxTokens:    agent.FinishLength,
	sdk.StopReasonToolUse:      agent.FinishToolCalls,
	sdk.StopReasonRefusal:      agent.FinishFilter,
}

func finishReason(s sdk.StopReason) agent.FinishReason {
	return cmp.Or(finishReasons[s], agent.FinishOther)
}
