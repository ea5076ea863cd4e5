package openai

import (
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// params is the Chat Completions request for req, asking for the usage
// in the stream's last chunk.
func (m *Model) params(req agent.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model:         m.model,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		p.Messages = append(p.Messages, messages(msg)...)
	}
	for _, t := range req.Tools {
		var schema shared.FunctionParameters
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return p, workflow.Fatal(fmt.Errorf("openai: the schema of tool %q: %w", t.Name, err))
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: sdk.String(t.Description), Parameters: schema,
		}))
	}
	s := req.Settings
	switch {
	case s.MaxTokens > 0 && m.maxTokens:
		p.MaxTokens = sdk.Int(int64(s.MaxTokens))
	case s.MaxTokens > 0:
		p.MaxCompletionTokens = sdk.Int(int64(s.MaxTokens))
	}
	if s.Temperature != nil {
		p.Temperature = sdk.Float(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = sdk.Float(*s.TopP)
	}
	if len(s.Stop) > 0 {
		p.Stop = sdk.ChatCompletionNewParamsStopUnion{OfStringArray: s.Stop}
	}
	return p, nil
}

// messages maps one message: tool results become a tool message each.
func messages(msg agent.Message) []sdk.ChatCompletionMessageParamUnion {
	switch msg.Role {
	case agent.RoleAssistant:
		a := sdk.ChatCompletionAssistantMessageParam{}
		if msg.Text != "" {
			a.Content.OfString = sdk.String(msg.Text)
		}
		for _, c := range msg.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID: c.ID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Input)},
			}})
		}
		return []sdk.ChatCompletionMessageParamUnion{{OfAssistant: &a}}
	case agent.RoleTool:
		var out []sdk.ChatCompletionMessageParamUnion
		for _, r := range msg.ToolResults {
			out = append(out, sdk.ToolMessage(r.Content(), r.CallID))
		}
		return out
	}
	return []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage(msg.Text)}
}
