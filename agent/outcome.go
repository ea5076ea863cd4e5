package agent

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/lambdaworkflow/workflow"
)

// Outcome classifies what came of a tool call, for the model, the stream
// and telemetry. It never changes what the tool returned.
type Outcome string

// The outcomes.
const (
	// Success: the tool returned a result.
	Success Outcome = "success"
	// Denied: the tool, or the person asked to approve it, refused the
	// call on purpose, with a code (see [Deny]).
	Denied Outcome = "denied"
	// Fault: the tool failed (after its retries), or its input did not
	// decode.
	Fault Outcome = "fault"
	// Cancelled: the call's context was cancelled. Only the runtime
	// cancels; a tool cannot claim it.
	Cancelled Outcome = "cancelled"
)

// DeniedCode is the code of a denial whose own code is not a valid one.
const DeniedCode = "DENIED"

// NotApprovedCode is the code of a call a person refused.
const NotApprovedCode = "NOT_APPROVED"

// DenialError is a tool's deliberate refusal. Return one with [Deny].
type DenialError struct {
	Code    string
	Message string
}

func (e *DenialError) Error() string { return fmt.Sprintf("denied (%s): %s", e.Code, e.Message) }

// ErrCancelled is a tool call whose context was cancelled.
var ErrCancelled = errors.New("agent: tool call cancelled")

func init() {
	workflow.RegisterError(&DenialError{})
	workflow.RegisterError(ErrCancelled)
}

// denialCode is what a code may look like: it reaches telemetry and
// prompts, so it must be an identifier, never user data.
var denialCode = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// Deny returns the error a tool returns to refuse a call: the model is
// told the code and the message, the run goes on, and the step is not
// retried. code is an identifier of upper-case letters, digits and
// underscores that starts with a letter, at most 64 long; any other code
// becomes [DeniedCode].
func Deny(code, message string) error {
	if !denialCode.MatchString(code) {
		code = DeniedCode
	}
	return workflow.Fatal(&DenialError{Code: code, Message: message})
}

// classify turns a tool's error into its result.
func classify(r ToolResult, err error) ToolResult {
	var denial *DenialError
	switch {
	case errors.As(err, &denial):
		r.Outcome, r.Code, r.Error = Denied, denial.Code, denial.Message
	case errors.Is(err, ErrCancelled):
		r.Outcome, r.Error = Cancelled, "cancelled"
	default:
		var stepErr *workflow.StepError
		if errors.As(err, &stepErr) {
			err = stepErr.Err // the tool's own words, not the step's wrapping
		}
		r.Outcome, r.Error = Fault, err.Error()
	}
	return r
}
