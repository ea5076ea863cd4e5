package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/lambdaworkflow/workflow"
)

// Approval is a person's decision on a tool call that needs one (see
// [NeedsApproval]).
type Approval struct {
	Approved bool   `json:"approved"`
	Comment  string `json:"comment,omitempty"`
	// Input, if set, replaces the call's input: the person edited it.
	Input json.RawMessage `json:"input,omitempty"`
	// Code is a refusal's denial code (default [NotApprovedCode]).
	Code string `json:"code,omitempty"`
}

// ApprovalRequest is the metadata of an approval hook, for a UI that
// lists what waits for a decision.
type ApprovalRequest struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
}

// Approvals is the hook a call that needs approval waits on. Its token is
// the tool call's ID.
var Approvals = workflow.DefineHook(func(a Approval) error {
	if len(a.Input) > 0 && !json.Valid(a.Input) {
		return errors.New("the edited input is not JSON")
	}
	return nil
})

// Approve sends a decision on the tool call toolCallID. An edited input
// that is not JSON is refused before anything is written.
func Approve(ctx context.Context, c *workflow.Client, toolCallID string, a Approval) error {
	return Approvals.Resume(ctx, c, toolCallID, a)
}

// awaitApproval waits for the decision on call, from its hook or, if the
// tool has one, its link. It returns the call to run, or the result of a
// refused one.
func awaitApproval(ctx workflow.Context, call ToolCall, link *approvalLink) (ToolCall, *ToolResult) {
	hook := Approvals.Create(ctx, workflow.WithToken(call.ID), workflow.WithMetadata(ApprovalRequest{Tool: call.Name, Input: call.Input}))
	defer hook.Dispose(ctx)
	var a Approval
	if link != nil {
		var done *ToolResult
		if a, done = link.await(ctx, call, hook); done != nil {
			return call, done
		}
	} else {
		var err error
		if a, err = hook.Receive(ctx); err != nil {
			return call, &ToolResult{CallID: call.ID, Name: call.Name, Outcome: Fault, Error: "waiting for approval: " + err.Error()}
		}
	}
	if !a.Approved {
		code := NotApprovedCode
		if a.Code != "" {
			code = cmp.Or(denialCode.FindString(a.Code), DeniedCode)
		}
		return call, &ToolResult{CallID: call.ID, Name: call.Name, Outcome: Denied, Code: code, Error: cmp.Or(a.Comment, "the call was not approved")}
	}
	if len(a.Input) > 0 {
		call.Input = a.Input
	}
	return call, nil
}
