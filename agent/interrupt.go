package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow"
)

// Interrupt is a named request/response contract the model may choose,
// to ask a person for something before it goes on, as useReason's
// interrupts are: the model sees a tool named after the contract whose
// input is a Req; when it calls it, the run waits (at no cost, for as long
// as it takes) on the hook [InterruptToken] names, until a valid Resp
// arrives ([Interrupt.Respond], [RespondInterrupt]), which the model then
// reads as the call's result. Both types' JSON schemas come from the Go
// types, as tools' do; a type with a Validate method adds its own rules.
//
// An interrupt runs no code of the application and is not counted as a
// tool call; it counts toward [WithMaxSteps] like any model call that
// follows it, and [WithMaxInterrupts] bounds how many a Run may make.
type Interrupt[Req, Resp any] struct {
	spec     ToolSpec
	request  schema
	response schema
}

// InterruptDef is an interrupt of any types, as [WithInterrupts] takes it.
type InterruptDef interface {
	Spec() ToolSpec
	contract() interruptContract
}

// interruptContract is what the loop needs of an interrupt.
type interruptContract struct {
	name              string
	request, response schema
	// accepts checks a response against the schema and the response
	// type's Validate method.
	accepts func(json.RawMessage) error
}

// NewInterrupt defines an interrupt contract. Define it at package level,
// beside the agent that offers it.
func NewInterrupt[Req, Resp any](name, description string) *Interrupt[Req, Resp] {
	i := &Interrupt[Req, Resp]{request: schemaOf[Req](), response: schemaOf[Resp]()}
	i.spec = ToolSpec{Name: name, Description: description, InputSchema: i.request.raw}
	return i
}

// Spec returns the interrupt as the model sees it: a tool.
func (i *Interrupt[Req, Resp]) Spec() ToolSpec { return i.spec }

func (i *Interrupt[Req, Resp]) contract() interruptContract {
	return interruptContract{name: i.spec.Name, request: i.request, response: i.response, accepts: i.accepts}
}

func (i *Interrupt[Req, Resp]) accepts(raw json.RawMessage) error {
	_, err := decodeChecked[Resp](i.response, raw)
	return err
}

// WithInterrupts offers the model interrupt contracts to choose from.
func WithInterrupts(defs ...InterruptDef) Option {
	return func(c *config) { c.interrupts = append(c.interrupts, defs...) }
}

// WithMaxInterrupts bounds the interrupts of one Run (human turns, apart
// from model steps); past it the model is told the request was denied
// with [InterruptLimitCode]. Zero, the default, sets no bound.
func WithMaxInterrupts(n int) Option { return func(c *config) { c.maxInterrupts = n } }

// InterruptLimitCode is the denial code of an interrupt past
// [WithMaxInterrupts].
const InterruptLimitCode = "INTERRUPT_LIMIT"

// InterruptToken is the token of the hook an interrupt the model chose
// with the tool call toolCallID waits on. It differs from the call's
// approval token so that an approval cannot answer an interrupt.
func InterruptToken(toolCallID string) string { return "interrupt:" + toolCallID }

// InterruptRequest is the metadata of an interrupt's hook, for a UI that
// lists what waits for an answer (workflow.Client.GetHook) and for
// [RespondInterrupt], which validates against its schema.
type InterruptRequest struct {
	Interrupt      string          `json:"interrupt"`
	CallID         string          `json:"callId"`
	Request        json.RawMessage `json:"request"`
	ResponseSchema json.RawMessage `json:"responseSchema"`
}

// InterruptRecord is an interrupt a Run went through: the validated
// request and response.
type InterruptRecord struct {
	Interrupt string          `json:"interrupt"`
	CallID    string          `json:"callId"`
	Request   json.RawMessage `json:"request"`
	Response  json.RawMessage `json:"response"`
}

// interruptResponses is the hook every interrupt waits on. Its payload is
// checked against the contract's schema in the workflow, which knows the
// contract, after RespondInterrupt checked it against the hook's copy.
var interruptResponses = workflow.DefineHook[json.RawMessage](nil)

// ErrInvalidResponse matches every refused interrupt response.
var ErrInvalidResponse = errors.New("agent: invalid interrupt response")

// InvalidResponseError is a response its interrupt's contract refuses. It
// was not sent: the interrupt still waits.
type InvalidResponseError struct {
	Interrupt string
	Err       error
}

func (e *InvalidResponseError) Error() string {
	return fmt.Sprintf("agent: the response does not match interrupt %q: %v", e.Interrupt, e.Err)
}

// Unwrap returns the contract's reason.
func (e *InvalidResponseError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, [ErrInvalidResponse]) true.
func (e *InvalidResponseError) Is(target error) bool { return target == ErrInvalidResponse }

// Respond answers the interrupt the tool call toolCallID chose. A
// response that the contract refuses, or an interrupt that is another
// contract, fails with an [*InvalidResponseError] and writes nothing.
func (i *Interrupt[Req, Resp]) Respond(ctx context.Context, c *workflow.Client, toolCallID string, response Resp) error {
	raw, err := json.Marshal(response)
	if err == nil {
		err = i.accepts(raw)
	}
	if err != nil {
		return &InvalidResponseError{Interrupt: i.spec.Name, Err: err}
	}
	return respond(ctx, c, toolCallID, raw, i.spec.Name)
}

// Request returns what the model asked in the interrupt of toolCallID.
func (i *Interrupt[Req, Resp]) Request(ctx context.Context, c *workflow.Client, toolCallID string) (Req, error) {
	var req Req
	meta, err := pendingInterrupt(ctx, c, toolCallID)
	if err != nil {
		return req, err
	}
	if meta.Interrupt != i.spec.Name {
		return req, fmt.Errorf("agent: tool call %s chose interrupt %q, not %q", toolCallID, meta.Interrupt, i.spec.Name)
	}
	return req, json.Unmarshal(meta.Request, &req)
}

// RespondInterrupt answers the interrupt the tool call toolCallID chose
// with a JSON response, as an HTTP route receives it: it is validated
// against the response schema the interrupt's hook holds, and refused
// with an [*InvalidResponseError] before anything is written. (Only the
// workflow, which has the Go type, runs its Validate method: a response
// that fails it is skipped there and the interrupt waits on; use
// [Interrupt.Respond] to hear of it at once.)
func RespondInterrupt(ctx context.Context, c *workflow.Client, toolCallID string, response json.RawMessage) error {
	return respond(ctx, c, toolCallID, response, "")
}

func respond(ctx context.Context, c *workflow.Client, toolCallID string, response json.RawMessage, want string) error {
	meta, err := pendingInterrupt(ctx, c, toolCallID)
	if err != nil {
		return err
	}
	if want != "" && meta.Interrupt != want {
		return &InvalidResponseError{Interrupt: want, Err: fmt.Errorf("tool call %s chose interrupt %q", toolCallID, meta.Interrupt)}
	}
	if err := checkAgainst(meta.ResponseSchema, response); err != nil {
		return &InvalidResponseError{Interrupt: meta.Interrupt, Err: err}
	}
	return interruptResponses.Resume(ctx, c, InterruptToken(toolCallID), response)
}

// pendingInterrupt reads the metadata of the interrupt toolCallID waits on.
func pendingInterrupt(ctx context.Context, c *workflow.Client, toolCallID string) (InterruptRequest, error) {
	var meta InterruptRequest
	h, err := c.GetHook(ctx, InterruptToken(toolCallID))
	if err != nil {
		return meta, err
	}
	if err := json.Unmarshal(h.Metadata, &meta); err != nil || meta.Interrupt == "" {
		return meta, fmt.Errorf("agent: hook %q is not an interrupt's", h.Token)
	}
	return meta, nil
}
