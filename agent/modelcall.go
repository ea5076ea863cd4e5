package agent

import (
	"context"

	"github.com/lambdaworkflow/workflow"
)

// callModel is the model call step. It streams the call's parts to the
// run's stream as the model produces them, under a start part that a
// retry repeats, and returns the assembled response for the log.
func (a *Agent) callModel(ctx context.Context, req Request) (Response, error) {
	info, _ := workflow.GetStepInfo(ctx)
	emit, err := openCall(ctx, a.cfg.namespace, info.StepID, info.Attempt)
	if err != nil {
		return Response{}, err
	}
	if err := writeResults(emit, lastResults(req.Messages)); err != nil {
		return Response{}, err
	}
	c := newCollector()
	for d, err := range a.model.Stream(ctx, req) {
		if err != nil {
			_ = emit(Part{Type: PartError, Error: err.Error()}) // the step's error says it all if this fails too
			return Response{}, err
		}
		c.add(d)
		if err := emitDelta(emit, d); err != nil {
			return Response{}, err
		}
	}
	resp, err := c.result()
	if err != nil {
		return Response{}, workflow.Fatal(err)
	}
	for _, call := range resp.Message.ToolCalls {
		output := a.outputs[call.Name]
		part := Part{Type: PartToolCall, ToolCall: &call, NeedsApproval: a.approvals[call.Name], Interrupt: a.interruptName(call.Name), Output: output.name}
		if err := emit(part); err != nil {
			return Response{}, err
		}
		if output.name != "" && output.newPass == nil && output.check(call.Input) == nil {
			// A contract without streaming fields is its call's input,
			// complete now; the loop checks it again, the same way.
			if err := emit(Part{Type: PartData, Data: &DataUpdate{StreamID: call.ID, Kind: DataFinal, Value: call.Input}}); err != nil {
				return Response{}, err
			}
		}
	}
	if err := emit(Part{Type: PartFinishStep, Usage: &resp.Usage, FinishReason: resp.FinishReason}); err != nil {
		return Response{}, err
	}
	if len(resp.Message.ToolCalls) == 0 && !a.mustReturn {
		err = emit(Part{Type: PartFinish, FinishReason: resp.FinishReason})
	}
	return resp, err
}

// emitDelta streams what a delta shows a reader.
func emitDelta(emit func(Part) error, d Delta) error {
	if d.Text != "" {
		if err := emit(Part{Type: PartTextDelta, Text: d.Text}); err != nil {
			return err
		}
	}
	if d.ToolCall != nil {
		return emit(Part{Type: PartToolDelta, ToolDelta: d.ToolCall})
	}
	return nil
}

// lastResults returns the tool results a request answers the model
// with: the results of the calls it made last, before any user messages
// a PrepareStep added after them.
func lastResults(messages []Message) []ToolResult {
	for i := len(messages) - 1; i >= 0 && messages[i].Role != RoleAssistant; i-- {
		if messages[i].Role == RoleTool {
			return messages[i].ToolResults
		}
	}
	return nil
}

// writeResults streams tool results.
func writeResults(emit func(Part) error, results []ToolResult) error {
	for _, r := range results {
		if err := emit(Part{Type: PartToolResult, ToolResult: &r}); err != nil {
			return err
		}
	}
	return nil
}

// finishInput is what the step that ends a Run no model answer ended
// writes: the last tool results, which no model call will, and why it
// ended.
type finishInput struct {
	Results []ToolResult `json:"results,omitempty"`
	Reason  FinishReason `json:"reason"`
}

// writeFinish is the step that ends a Run stopped by its step limit or a
// return contract.
func (a *Agent) writeFinish(ctx context.Context, in finishInput) (struct{}, error) {
	w, err := workflow.Writer[Part](ctx, a.cfg.namespace)
	if err != nil {
		return struct{}{}, err
	}
	if err := writeResults(w.Write, in.Results); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, w.Write(Part{Type: PartFinish, FinishReason: in.Reason})
}

// interruptName is name if it names one of the agent's interrupts.
func (a *Agent) interruptName(name string) string {
	if _, ok := a.interrupts[name]; ok {
		return name
	}
	return ""
}
