package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// params is the Messages request for req.
func (m *Model) params(req agent.Request) (sdk.MessageNewParams, error) {
	s := req.Settings
	p := sdk.MessageNewParams{Model: sdk.Model(m.model), MaxTokens: DefaultMaxTokens, StopSequences: s.Stop}
	if s.MaxTokens > 0 {
		p.MaxTokens = int64(s.MaxTokens)
	}
	if s.Temperature != nil {
		p.Temperature = sdk.Float(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = sdk.Float(*s.TopP)
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	for _, msg := range req.Messages {
		if blocks := blocks(msg); len(blocks) > 0 {
			// The API joins consecutive messages of one role, so tool
			// results and the user's next words may come apart.
			if msg.Role == agent.RoleAssistant {
				p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
			} else {
				p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
			}
		}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			return p, workflow.Fatal(fmt.Errorf("anthropic: the schema of tool %q: %w", t.Name, err))
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{
			Name: t.Name, Description: sdk.String(t.Description), InputSchema: schema,
		}})
	}
	return p, nil
}

// blocks is a message's content; a failed tool call's result is marked
// is_error.
func blocks(msg agent.Message) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, r := range msg.ToolResults {
		out = append(out, sdk.NewToolResultBlock(r.CallID, r.Content(), r.Outcome != agent.Success))
	}
	if msg.Text != "" {
		out = append(out, sdk.NewTextBlock(msg.Text))
	}
	for _, c := range msg.ToolCalls {
		out = append(out, sdk.NewToolUseBlock(c.ID, c.Input, c.Name))
	}
	return out
}

// inputSchema splits a JSON schema into the SDK's fields: properties and
// required, and the rest (descriptions, $defs, ...) as extra fields.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return sdk.ToolInputSchemaParam{}, err
	}
	s := sdk.ToolInputSchemaParam{Properties: fields["properties"]}
	if req, ok := fields["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	delete(fields, "properties")
	delete(fields, "required")
	delete(fields, "type")
	if len(fields) > 0 {
		s.ExtraFields = fields
	}
	return s, nil
}
