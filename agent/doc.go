// Package agent runs a durable AI agent inside a workflow: a model that
// streams its answers, typed tools it may call, and a person's approval
// where a tool needs one.
//
// Every model call is a step: its response (text, tool calls, usage,
// finish reason, provider metadata, warnings) is recorded once and never
// billed again on replay. While it runs, its tokens stream to the run's
// stream in the agent's namespace as [Part]s, so a client sees them live
// and reconnects from any chunk index; a retried call streams again under
// a new [PartStart] with the same Call, and [Settle] drops what it
// replaced.
//
//	var weather = agent.NewTool("weather", "Today's weather", func(ctx context.Context, in City, call agent.ToolCallInfo) (string, error) { ... })
//	var book = agent.NewTool("book", "Book a flight", bookFlight, agent.NeedsApproval())
//	var assistant = agent.New("travel", model, agent.WithTools(weather, book))
//
//	var Chat = workflow.Define("chat", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
//		return assistant.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
//	})
//
// Run loops model → tool calls (side by side) → results → model until the
// model answers without a call or [WithMaxSteps] is reached. A tool's
// failure is a result the model reads, classified as [Success], [Denied]
// (with a code, see [Deny]), [Fault] or [Cancelled]. A call of a tool that
// [NeedsApproval] waits, at no cost and for as long as it takes, on the
// [Approvals] hook whose token is the call's ID; [Approve] sends the
// decision, which may edit the input.
//
// The model may also choose an [Interrupt], a named request/response
// contract a person answers ([Interrupt.Respond]) before the loop goes on.
// Structured objects stream beside the text as [DataUpdate]s, written by
// code ([NewDataStream]) or derived from a model's JSON answer
// ([NewOutput]), the final object validated against its Go type.
// [ReportError] records an error that was handled on the span and the
// stream without changing what happens next.
//
// Package agenttest has a scripted Model for tests; docs/AGENTS.md maps
// the agent documents this package follows to its API.
package agent
