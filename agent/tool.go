package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow"
)

// ToolCallInfo is what a tool is told about the call it answers.
type ToolCallInfo struct {
	// ID is the provider's ID of the call, also the token of its approval
	// hook.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Messages is the conversation up to and including the assistant
	// message that made the call. A step-level tool gets it only with
	// [WithMessages]: it is recorded in the step's input.
	Messages []Message `json:"messages,omitempty"`
}

// ToolDef is a tool of any input and output type, as [WithTools] takes
// it. Make one with [NewTool] or [NewWorkflowTool].
type ToolDef interface {
	Spec() ToolSpec
	needsApproval() bool
	approvalLink() *approvalLink
	run(ctx workflow.Context, call ToolCall, info ToolCallInfo) ToolResult
}

// Tool is a tool that takes an I, decoded from the model's JSON, and
// returns an O, encoded back for it. The model sees the JSON schema of I,
// generated from the Go type: document fields with `json` and
// `jsonschema:"what it means"` tags.
type Tool[I, O any] struct {
	spec     ToolSpec
	cfg      toolConfig
	step     *workflow.Step[toolInput[I], O]
	workflow func(ctx workflow.Context, input I, call ToolCallInfo) (O, error)
}

// toolInput is a step-level tool's recorded input.
type toolInput[I any] struct {
	Input I            `json:"input"`
	Call  ToolCallInfo `json:"call"`
}

// ToolOption configures a tool.
type ToolOption func(*toolConfig)

type toolConfig struct {
	approval bool
	link     *approvalLink // ApprovalByLink
	messages bool
	step     []workflow.StepOption
}

// NeedsApproval makes every call of the tool wait for a person's
// [Approval], sent to the hook whose token is the call's ID, before it
// runs. Waiting costs nothing, for as long as it takes.
func NeedsApproval() ToolOption { return func(c *toolConfig) { c.approval = true } }

// WithMessages gives a step-level tool the conversation so far in
// ToolCallInfo.Messages. It is recorded with every call, so ask for it
// only when the tool needs it. Workflow-level tools always have it.
func WithMessages() ToolOption { return func(c *toolConfig) { c.messages = true } }

// WithStepOptions sets a step-level tool's retry policy.
func WithStepOptions(opts ...workflow.StepOption) ToolOption {
	return func(c *toolConfig) { c.step = append(c.step, opts...) }
}

// NewTool defines a step-level tool: fn runs as a durable step named
// "agent.tool."+name, retried on failure, its result recorded once. It may
// do I/O and write to the run's stream (workflow.Writer). Define tools at
// package level, like steps.
func NewTool[I, O any](name, description string, fn func(ctx context.Context, input I, call ToolCallInfo) (O, error), opts ...ToolOption) *Tool[I, O] {
	t := newTool[I, O](name, description, opts)
	t.step = workflow.DefineStep("agent.tool."+name, func(ctx context.Context, in toolInput[I]) (O, error) {
		out, err := fn(ctx, in.Input, in.Call)
		if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return out, workflow.Fatal(ErrCancelled)
		}
		return out, err
	}, t.cfg.step...)
	return t
}

// NewWorkflowTool defines a workflow-level tool: fn is workflow code, so it
// may sleep, wait on hooks, start child runs and call steps, and must be
// deterministic (see package workflow).
func NewWorkflowTool[I, O any](name, description string, fn func(ctx workflow.Context, input I, call ToolCallInfo) (O, error), opts ...ToolOption) *Tool[I, O] {
	t := newTool[I, O](name, description, opts)
	t.workflow = fn
	return t
}

func newTool[I, O any](name, description string, opts []ToolOption) *Tool[I, O] {
	t := &Tool[I, O]{spec: ToolSpec{Name: name, Description: description, InputSchema: SchemaFor[I]()}}
	for _, o := range opts {
		o(&t.cfg)
	}
	if t.cfg.link != nil {
		t.cfg.link.define(name)
	}
	return t
}

// Spec returns the tool as the model sees it.
func (t *Tool[I, O]) Spec() ToolSpec { return t.spec }

func (t *Tool[I, O]) needsApproval() bool { return t.cfg.approval }

func (t *Tool[I, O]) approvalLink() *approvalLink { return t.cfg.link }

// Call runs the tool directly from workflow code, outside a model's
// choice, the way useTool does; a step-level tool's result is recorded.
func (t *Tool[I, O]) Call(ctx workflow.Context, input I, call ToolCallInfo) (O, error) {
	if t.workflow != nil {
		return t.workflow(ctx, input, call)
	}
	if !t.cfg.messages {
		call.Messages = nil
	}
	return t.step.Call(ctx, toolInput[I]{Input: input, Call: call})
}

func (t *Tool[I, O]) run(ctx workflow.Context, call ToolCall, info ToolCallInfo) ToolResult {
	r := ToolResult{CallID: call.ID, Name: call.Name}
	var in I
	if err := json.Unmarshal(call.Input, &in); err != nil {
		r.Outcome, r.Error = Fault, fmt.Sprintf("the input does not match the tool's schema: %v", err)
		return r
	}
	out, err := t.Call(ctx, in, info)
	if err != nil {
		return classify(r, err)
	}
	encoded, err := json.Marshal(out)
	if err != nil {
		r.Outcome, r.Error = Fault, fmt.Sprintf("encoding the result: %v", err)
		return r
	}
	r.Outcome, r.Output = Success, encoded
	return r
}
