package agent

import "encoding/json"

// Role says who wrote a message.
type Role string

// The roles of a conversation. Tool results travel in a message of their
// own (RoleTool); each provider maps it to what its API expects.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation, as the model sees it. The system
// prompt is not a message: it is the agent's [WithSystem] option.
type Message struct {
	Role Role   `json:"role"`
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolResults answer the calls of the assistant message before (RoleTool).
	ToolResults []ToolResult `json:"toolResults,omitempty"`
}

// UserMessage is a message from the user.
func UserMessage(text string) Message { return Message{Role: RoleUser, Text: text} }

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID    string          `json:"id"` // the provider's, unique in the conversation
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult is what came of a tool call. Output is the tool's JSON
// result on success; otherwise Error says what happened, in words the
// model can act on.
type ToolResult struct {
	CallID  string          `json:"callId"`
	Name    string          `json:"name"`
	Outcome Outcome         `json:"outcome"`
	Output  json.RawMessage `json:"output,omitempty"`
	// Code is the denial code of a denied call (see [Deny]).
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
}

// Content is the result as the model reads it: the output on success,
// else a small JSON object naming the outcome.
func (r ToolResult) Content() string {
	if r.Outcome == Success {
		return string(r.Output)
	}
	b, _ := json.Marshal(struct {
		Outcome Outcome `json:"outcome"`
		Code    string  `json:"code,omitempty"`
		Error   string  `json:"error,omitempty"`
	}{r.Outcome, r.Code, r.Error})
	return string(b)
}

// Usage counts the tokens of one model call, or of a whole run summed.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// CachedInputTokens is the part of InputTokens read from a prompt cache.
	CachedInputTokens int `json:"cachedInputTokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens, u.CachedInputTokens + o.CachedInputTokens}
}

// TotalTokens is input plus output.
func (u Usage) TotalTokens() int { return u.InputTokens + u.OutputTokens }
