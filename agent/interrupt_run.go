package agent

import (
	"errors"

	"github.com/lambdaworkflow/workflow"
)

// awaitInterrupt runs an interrupt the model chose: it checks the request
// against the contract, then waits on the interrupt's hook until a
// response the contract accepts arrives. A response that got past
// RespondInterrupt's check some other way (a plain ResumeHook) and fails
// the contract is logged and skipped: the hook stays open for a valid one.
func awaitInterrupt(ctx workflow.Context, c interruptContract, call ToolCall) ToolResult {
	r := ToolResult{CallID: call.ID, Name: call.Name}
	if err := c.request.check(call.Input); err != nil {
		r.Outcome, r.Error = Fault, "the request does not match the interrupt's schema: "+err.Error()
		return r
	}
	hook := interruptResponses.Create(ctx, workflow.WithToken(InterruptToken(call.ID)), workflow.WithMetadata(InterruptRequest{
		Interrupt: c.name, CallID: call.ID, Request: call.Input, ResponseSchema: c.response.raw,
	}))
	defer hook.Dispose(ctx)
	for response, err := range hook.All(ctx) {
		if err == nil {
			err = c.accepts(response)
		}
		var conflict *workflow.HookConflictError
		switch {
		case errors.As(err, &conflict):
			r.Outcome, r.Error = Fault, "waiting for the response: "+err.Error()
			return r
		case err != nil:
			workflow.Logger(ctx).Warn("agent: an interrupt response does not match its contract; still waiting",
				"interrupt", c.name, "tool_call_id", call.ID, "err", err)
			continue
		}
		r.Outcome, r.Output = Success, response
		return r
	}
	r.Outcome, r.Error = Fault, "the interrupt's hook was disposed"
	return r
}

// interruptRecords returns the interrupts a model answer's calls went
// through, in the calls' order.
func (a *Agent) interruptRecords(calls []ToolCall, results []ToolResult) []InterruptRecord {
	var records []InterruptRecord
	for i, call := range calls {
		if _, ok := a.interrupts[call.Name]; ok && results[i].Outcome == Success {
			records = append(records, InterruptRecord{Interrupt: call.Name, CallID: call.ID, Request: call.Input, Response: results[i].Output})
		}
	}
	return records
}
