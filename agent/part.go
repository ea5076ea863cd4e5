package agent

// Part is one chunk of an agent's output on the run's stream, in the
// namespace of [WithNamespace]. A client renders text-delta parts as they
// come, shows tool calls and their results, and reconnects from any chunk
// index with workflow's Run.Readable.
//
// A model call that is retried (a provider error, a crashed worker)
// streams again from its beginning, under a new start part with the same
// Call: the client drops what it showed for that call since the earlier
// start. Everything else is written once.
type Part struct {
	Type PartType `json:"type"`
	// Call identifies the model call (the durable step's ID) a part
	// belongs to; a structured stream a step opened with NewDataStream
	// is a call of its own (the step's ID, "/", the stream's ID).
	Call    string `json:"call,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	Text    string `json:"text,omitempty"`
	// ToolCall is a complete call (PartToolCall), with NeedsApproval set
	// if it waits for a person's decision on the hook whose token is its ID.
	ToolCall      *ToolCall      `json:"toolCall,omitempty"`
	ToolDelta     *ToolCallDelta `json:"toolDelta,omitempty"`
	NeedsApproval bool           `json:"needsApproval,omitempty"`
	// Interrupt names the contract of a tool call that is an interrupt:
	// the run waits for its response on the hook [InterruptToken] names.
	Interrupt string `json:"interrupt,omitempty"`
	// Output names the contract of a tool call that emits an output
	// ([WithOutputs]); its value streams as structured data whose stream
	// ID is the call's ID.
	Output       string       `json:"output,omitempty"`
	ToolResult   *ToolResult  `json:"toolResult,omitempty"`
	Usage        *Usage       `json:"usage,omitempty"`
	FinishReason FinishReason `json:"finishReason,omitempty"`
	Error        string       `json:"error,omitempty"`
	// Data is a structured-data part's update (PartData).
	Data *DataUpdate `json:"data,omitempty"`
	// Handled marks an error part that reports an error a step handled
	// and went on from (see [ReportError]): no retry follows it.
	Handled bool `json:"handled,omitempty"`
	// MessageID and From identify a message a chat session took in
	// (PartMessage, with its words in Text).
	MessageID string `json:"messageId,omitempty"`
	From      string `json:"from,omitempty"`
}

// PartType says what a Part carries.
type PartType string

// The part types, in the order a model call writes them.
const (
	// PartStart opens a model call, or another step's attempt that
	// streams parts ([NewDataStream]). A second start with the same Call
	// means the step restarted: drop what came since the first.
	PartStart PartType = "start"
	// PartToolResult reports a result of the calls the model made before.
	PartToolResult PartType = "tool-result"
	PartTextDelta  PartType = "text-delta"
	// PartToolDelta is a piece of a tool call's input as the model writes it.
	PartToolDelta PartType = "tool-input-delta"
	PartToolCall  PartType = "tool-call"
	// PartError reports a failed attempt of a model call; a retry's start
	// part follows unless it was the last.
	PartError PartType = "error"
	// PartFinishStep closes a model call with its usage.
	PartFinishStep PartType = "finish-step"
	// PartFinish closes a Run of the agent.
	PartFinish PartType = "finish"
	// PartMessage is a message a multi-turn chat session (package
	// agent/chat) took in, written before the model turn that answers it.
	PartMessage PartType = "message"
	// PartData is an update of a structured object (see [DataUpdate]).
	PartData PartType = "structured-data"
)
