package bedrock

import (
	"cmp"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/lambdaworkflow/workflow/agent"
)

// reader turns ConverseStream events into deltas, keeping what arrives
// in pieces (usage, stop reason, metadata) for the last one.
type reader struct {
	finishReason agent.FinishReason
	usage        *agent.Usage
	metadata     map[string]any
	warned       bool // that reasoning content is not kept
}

// Read implements agent.EventReader.
func (r *reader) Read(event types.ConverseStreamOutput) []agent.Delta {
	switch e := event.(type) {
	case *types.ConverseStreamOutputMemberContentBlockStart:
		if use, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
			return []agent.Delta{{ToolCall: &agent.ToolCallDelta{
				Index: int(aws.ToInt32(e.Value.ContentBlockIndex)),
				ID:    aws.ToString(use.Value.ToolUseId),
				Name:  aws.ToString(use.Value.Name),
			}}}
		}
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		switch d := e.Value.Delta.(type) {
		case *types.ContentBlockDeltaMemberText:
			if d.Value != "" {
				return []agent.Delta{{Text: d.Value}}
			}
		case *types.ContentBlockDeltaMemberToolUse:
			return []agent.Delta{{ToolCall: &agent.ToolCallDelta{
				Index:      int(aws.ToInt32(e.Value.ContentBlockIndex)),
				InputDelta: aws.ToString(d.Value.Input),
			}}}
		case *types.ContentBlockDeltaMemberReasoningContent:
			if !r.warned {
				r.warned = true
				return []agent.Delta{{Warning: "bedrock: the model's reasoning content is not kept"}}
			}
		}
	case *types.ConverseStreamOutputMemberMessageStop:
		r.finishReason = finishReason(e.Value.StopReason)
	case *types.ConverseStreamOutputMemberMetadata:
		r.readMetadata(e.Value)
	}
	return nil
}

func (r *reader) readMetadata(m types.ConverseStreamMetadataEvent) {
	if u := m.Usage; u != nil {
		// Bedrock counts cached input apart; agent.Usage counts it in.
		read, written := int(aws.ToInt32(u.CacheReadInputTokens)), int(aws.ToInt32(u.CacheWriteInputTokens))
		r.usage = &agent.Usage{
			InputTokens:       int(aws.ToInt32(u.InputTokens)) + read + written,
			OutputTokens:      int(aws.ToInt32(u.OutputTokens)),
			CachedInputTokens: read,
		}
	}
	if m.Metrics != nil && m.Metrics.LatencyMs != nil {
		if r.metadata == nil {
			r.metadata = map[string]any{}
		}
		r.metadata["latencyMs"] = *m.Metrics.LatencyMs
	}
}

// errTruncated is a stream that ended before its message did; the step
// retries it. The SDK ends the stream quietly when the connection drops
// mid-message (it reads an unexpected EOF as the end): without the
// messageStop event, the answer is cut short.
var errTruncated = errors.New("bedrock: the ConverseStream response ended before the message did (the connection dropped?)")

// Finish implements agent.EventReader: the last delta, with what the
// stream's end told.
func (r *reader) Finish() (agent.Delta, error) {
	if r.finishReason == "" {
		return agent.Delta{}, errTruncated
	}
	return agent.Delta{Usage: r.usage, FinishReason: r.finishReason, Metadata: r.metadata}, nil
}

// finishReasons maps Converse's stop reasons
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_MessageStopEvent.html);
// any other is agent.FinishOther.
var finishReasons = map[types.StopReason]agent.FinishReason{
	types.StopReasonEndTurn:                    agent.FinishStop,
	types.StopReasonStopSequence:               agent.FinishStop,
	types.StopReasonToolUse:                    agent.FinishToolCalls,
	types.StopReasonMaxTokens:                  agent.FinishLength,
	types.StopReasonModelContextWindowExceeded: agent.FinishLength,
	types.StopReasonGuardrailIntervened:        agent.FinishFilter,
	types.StopReasonContentFiltered:            agent.FinishFilter,
}

func finishReason(s types.StopReason) agent.FinishReason {
	return cmp.Or(finishReasons[s], agent.FinishOther)
}
