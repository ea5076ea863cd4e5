package bedrock

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// input is the ConverseStream request for req. A request the SDK cannot
// encode (a tool schema or call input that is not a JSON object) fails
// the call for good: it would fail the same way again.
func (m *Model) input(req agent.Request) (*bedrockruntime.ConverseStreamInput, error) {
	in := &bedrockruntime.ConverseStreamInput{ModelId: aws.String(m.modelID)}
	if req.System != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	for _, msg := range req.Messages {
		content, err := contentOf(msg)
		if err != nil {
			return nil, workflow.Fatal(err)
		}
		role := types.ConversationRoleUser
		if msg.Role == agent.RoleAssistant {
			role = types.ConversationRoleAssistant
		}
		if len(content) == 0 {
			continue // Converse refuses empty messages
		}
		// Converse wants the roles to alternate: tool results and the
		// user's next words go in one user message.
		if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == role {
			in.Messages[n-1].Content = append(in.Messages[n-1].Content, content...)
			continue
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: content})
	}
	for _, t := range req.Tools {
		schema, err := object(t.InputSchema)
		if err != nil {
			return nil, workflow.Fatal(fmt.Errorf("bedrock: the schema of tool %q: %w", t.Name, err))
		}
		if in.ToolConfig == nil {
			in.ToolConfig = &types.ToolConfiguration{}
		}
		in.ToolConfig.Tools = append(in.ToolConfig.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
			Name:        aws.String(t.Name),
			Description: aws.String(t.Description),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
		}})
	}
	in.InferenceConfig = inference(req.Settings)
	return in, nil
}

// contentOf is a message's content blocks. A tool result is sent as text
// (agent.ToolResult.Content, which names a failure's outcome) with no
// status: Converse accepts text results from every model, and the status
// field only from some.
func contentOf(msg agent.Message) ([]types.ContentBlock, error) {
	var blocks []types.ContentBlock
	if msg.Text != "" {
		blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Text})
	}
	for _, c := range msg.ToolCalls {
		input, err := object(c.Input)
		if err != nil {
			return nil, fmt.Errorf("bedrock: the input of tool call %s: %w", c.ID, err)
		}
		blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String(c.ID), Name: aws.String(c.Name), Input: document.NewLazyDocument(input),
		}})
	}
	for _, r := range msg.ToolResults {
		blocks = append(blocks, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String(r.CallID),
			Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: r.Content()}},
		}})
	}
	return blocks, nil
}

// object decodes a JSON object for a smithy document.
func object(raw json.RawMessage) (map[string]any, error) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}

func inference(s agent.Settings) *types.InferenceConfiguration {
	if s.MaxTokens == 0 && s.Temperature == nil && s.TopP == nil && len(s.Stop) == 0 {
		return nil
	}
	c := &types.InferenceConfiguration{StopSequences: s.Stop}
	if s.MaxTokens > 0 {
		c.MaxTokens = aws.Int32(int32(min(s.MaxTokens, 1<<31-1)))
	}
	if s.Temperature != nil {
		c.Temperature = aws.Float32(float32(*s.Temperature))
	}
	if s.TopP != nil {
		c.TopP = aws.Float32(float32(*s.TopP))
	}
	return c
}
