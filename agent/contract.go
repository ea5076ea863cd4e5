package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lambdaworkflow/workflow"
)

// OutputContract is a structured value of type T that the model chooses
// to show in the middle of its answer, as useReason's output contracts
// are: the model sees a control tool named after the contract, and when
// it calls it the value reaches the run's stream as structured data (see
// [DataUpdate]; its stream ID is the tool call's ID), is validated
// against T's JSON schema and Validate method before its final part, and
// goes back to the model as the call's result, so that the text it writes
// next matches what was shown. The values are in [Result.Emissions].
//
// A T with streaming fields (`agent:"stream"`, as [NewOutput] takes them)
// is written by a separate streamed pass of the model: the control tool
// takes only a brief, and a structured model call (a step of its own,
// "agent.output.<agent>.<contract>") streams the fields' updates as the
// tokens arrive. The pass counts toward [WithMaxSteps] and the usage, like
// any model call. A T without streaming fields is the control tool's
// input: it is validated and written, final, once the model has written
// the call.
//
// An emit contract ([EmitOutput]) may be chosen any number of times
// between text. A return contract ([ReturnOutput]) ends the Run with its
// value in [Result.Return]; an agent that has one must finish with one: an
// answer that calls none is sent back with a reminder, within
// [WithMaxSteps]. A contract runs no code of the application and is not a
// tool call of it.
type OutputContract[T any] struct {
	spec    ToolSpec
	schema  schema
	fields  []streamedField
	returns bool
}

// OutputDef is an output contract of any type, as [WithOutputs] takes it.
type OutputDef interface {
	Spec() ToolSpec
	outputContract() outputContract
}

// EmitOutput defines a contract the model may emit between text, any
// number of times. Define it at package level, beside the agent.
func EmitOutput[T any](name, description string) *OutputContract[T] {
	return newContract[T](name, description, false)
}

// ReturnOutput defines a contract that ends the Run: the model finishes
// by choosing one of the agent's return contracts.
func ReturnOutput[T any](name, description string) *OutputContract[T] {
	return newContract[T](name, description, true)
}

func newContract[T any](name, description string, returns bool) *OutputContract[T] {
	c := &OutputContract[T]{schema: schemaOf[T](), fields: streamedFields[T](), returns: returns}
	c.spec = ToolSpec{Name: name, Description: description, InputSchema: c.schema.raw}
	if len(c.fields) > 0 {
		c.spec.InputSchema = briefSchema
	}
	return c
}

// briefSchema is the input of a streamed contract's control tool: what the
// model wants the value to say, for the pass that writes it.
var briefSchema = json.RawMessage(`{"type":"object","properties":{"brief":{"type":"string","description":"what the value should contain"}}}`)

// WithOutputs offers the model output contracts to choose from.
func WithOutputs(defs ...OutputDef) Option {
	return func(c *config) { c.outputs = append(c.outputs, defs...) }
}

// Spec returns the contract as the model sees it: a tool.
func (c *OutputContract[T]) Spec() ToolSpec { return c.spec }

// Values returns the validated values of this contract that res emitted,
// in order (the returned one last, if it is one).
func (c *OutputContract[T]) Values(res *Result) ([]T, error) {
	var out []T
	for _, e := range res.Emissions {
		if e.Output != c.spec.Name {
			continue
		}
		var v T
		if err := json.Unmarshal(e.Value, &v); err != nil {
			return out, fmt.Errorf("agent: output %q of call %s: %w", e.Output, e.CallID, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Emission is a value the model emitted through an output contract.
type Emission struct {
	Output string          `json:"output"`
	CallID string          `json:"callId"`
	Value  json.RawMessage `json:"value"`
	// Returns is set on a return contract's value, which ended the Run.
	Returns bool `json:"returns,omitempty"`
}

// outputContract is what the loop needs of a contract.
type outputContract struct {
	name    string
	returns bool
	// check validates a value against the schema and Validate.
	check func(json.RawMessage) error
	// newPass, for a contract with streaming fields, defines the
	// agent's structured pass that writes its values.
	newPass func(agent string, model Model, cfg config) outputPass
}

// outputPass writes one value of a streamed contract, to the structured
// stream streamID, and returns it with the pass's response.
type outputPass func(ctx workflow.Context, messages []Message, streamID string) (json.RawMessage, Response, error)

func (c *OutputContract[T]) outputContract() outputContract {
	oc := outputContract{name: c.spec.Name, returns: c.returns, check: func(raw json.RawMessage) error {
		_, err := decodeChecked[T](c.schema, raw)
		return err
	}}
	if len(c.fields) > 0 {
		oc.newPass = func(agent string, model Model, cfg config) outputPass {
			o := newOutput[T](agent+"."+c.spec.Name, model, cfg)
			return func(ctx workflow.Context, messages []Message, streamID string) (json.RawMessage, Response, error) {
				r, err := o.generate(ctx, messages, streamID)
				if err != nil {
					return nil, Response{}, err
				}
				raw, err := json.Marshal(r.Value)
				return raw, r.Response, err
			}
		}
	}
	return oc
}

// passMessages is what a streamed contract's pass is asked: the
// conversation before the answer that chose the contract, that answer's
// text, and the request to write the value.
func passMessages(messages []Message, call ToolCall) []Message {
	last := len(messages) - 1
	out := slices.Clone(messages[:last])
	if text := messages[last].Text; text != "" {
		out = append(out, Message{Role: RoleAssistant, Text: text})
	}
	var in struct {
		Brief string `json:"brief"`
	}
	_ = json.Unmarshal(call.Input, &in) // a brief that does not decode is no brief
	return append(out, UserMessage(fmt.Sprintf("Write the %s value now. %s", call.Name, in.Brief)))
}

// emit runs a tool call that chose the output contract c: it checks the
// call's value, or has the contract's pass write one, and returns what
// the model is told, and the pass's response if there was one.
func (a *Agent) emit(ctx workflow.Context, c outputContract, call ToolCall, messages []Message) (ToolResult, *Response) {
	r := ToolResult{CallID: call.ID, Name: call.Name}
	pass := a.passes[c.name]
	if pass == nil {
		if err := c.check(call.Input); err != nil {
			r.Outcome, r.Error = Fault, "the value does not match the output's schema: "+err.Error()
			return r, nil
		}
		r.Outcome, r.Output = Success, call.Input
		return r, nil
	}
	value, resp, err := pass(ctx, passMessages(messages, call), call.ID)
	if err != nil {
		r.Outcome, r.Error = Fault, "writing the output: "+err.Error()
		return r, nil
	}
	r.Outcome, r.Output = Success, value
	return r, &resp
}

// emissions returns the values a model answer's calls emitted through
// output contracts, in the calls' order.
func (a *Agent) emissions(calls []ToolCall, results []ToolResult) []Emission {
	var out []Emission
	for i, call := range calls {
		if c, ok := a.outputs[call.Name]; ok && results[i].Outcome == Success {
			out = append(out, Emission{Output: c.name, CallID: call.ID, Value: results[i].Output, Returns: c.returns})
		}
	}
	return out
}

// returnReminder is what an answer that chose no return contract is sent
// back with.
func (a *Agent) returnReminder() string {
	var names []string
	for name, c := range a.outputs {
		if c.returns {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return "Finish by calling one of these tools: " + strings.Join(names, ", ") + "."
}
