package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lambdaworkflow/workflow"
)

// Output is a model call whose answer is a JSON object of type T,
// streamed to the run as structured data while the model writes it, as
// useReason's structured output is: the fields of T tagged
// `agent:"stream"` become set, text-delta and append updates as their
// text arrives (see [DataUpdate]), the rest arrive with the final
// object, and the final object is written only once it passes T's JSON
// schema and Validate method. The answer's text is not streamed as text.
//
//	type Draft struct {
//		Subject string   `json:"subject" agent:"stream"`
//		Body    string   `json:"body" agent:"stream"`
//		Bullets []string `json:"bullets" agent:"stream"`
//	}
//	var drafter = agent.NewOutput[Draft]("drafter", model, agent.WithSystem("Draft the email."))
//	res, err := drafter.Generate(ctx, messages) // in workflow code
//
// Like every model call it is a step, recorded once and never billed
// again on replay. Options are the agent's: WithSystem, WithSettings,
// WithNamespace, WithModelStepOptions.
type Output[T any] struct {
	name   string
	model  Model
	cfg    config
	schema schema
	fields []streamedField
	call   *workflow.Step[outputCall, Response]
}

// outputCall is a structured call's recorded input: the request and the
// structured stream it writes.
type outputCall struct {
	Request  Request `json:"request"`
	StreamID string  `json:"streamId"`
}

// OutputResult is what an Output call came to.
type OutputResult[T any] struct {
	Value T `json:"value"`
	// StreamID names the structured stream the call wrote.
	StreamID string   `json:"streamId"`
	Response Response `json:"response"`
}

// NewOutput defines a structured model call. Its calls are the step
// "agent.output."+name. Define it at package level, like a step.
func NewOutput[T any](name string, model Model, opts ...Option) *Output[T] {
	cfg := config{namespace: DefaultNamespace}
	for _, o := range opts {
		o(&cfg)
	}
	return newOutput[T](name, model, cfg)
}

func newOutput[T any](name string, model Model, cfg config) *Output[T] {
	o := &Output[T]{name: name, model: model, cfg: cfg, schema: schemaOf[T](), fields: streamedFields[T]()}
	o.call = workflow.DefineStep("agent.output."+name, o.callModel, cfg.step...)
	return o
}

// ErrInvalidOutput matches an Output call whose answer T refuses.
var ErrInvalidOutput = errors.New("agent: the model's output does not match its type")

func init() { workflow.RegisterError(ErrInvalidOutput) }

// Generate asks the model for a T. It fails, after the step's retries,
// when the model call fails, and with an error matching
// [ErrInvalidOutput] when the answer is not a valid T (nothing final is
// written then, and a client drops the provisional updates).
func (o *Output[T]) Generate(ctx workflow.Context, messages []Message) (*OutputResult[T], error) {
	return o.generate(ctx, messages, o.name+"-"+workflow.UUID(ctx))
}

// generate asks for a T written to the structured stream id.
func (o *Output[T]) generate(ctx workflow.Context, messages []Message, id string) (*OutputResult[T], error) {
	system := strings.TrimSpace(o.cfg.system + "\n\nAnswer with one JSON object, and nothing else, that matches this JSON schema:\n" + string(o.schema.raw))
	resp, err := o.call.Call(ctx, outputCall{Request: Request{System: system, Messages: messages, Settings: o.cfg.settings}, StreamID: id})
	if err != nil {
		return nil, err
	}
	v, err := decodeChecked[T](o.schema, outputJSON(resp.Message.Text))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidOutput, err.Error())
	}
	return &OutputResult[T]{Value: v, StreamID: id, Response: resp}, nil
}

// callModel is the structured call's step: it streams the answer's
// updates as it arrives and writes the final object if it is a valid T.
func (o *Output[T]) callModel(ctx context.Context, in outputCall) (Response, error) {
	info, _ := workflow.GetStepInfo(ctx)
	emit, err := openCall(ctx, o.cfg.namespace, info.StepID, info.Attempt)
	if err != nil {
		return Response{}, err
	}
	ds := newDataStream[T](in.StreamID, emit)
	watch := newFieldWatcher(o.fields)
	c := newCollector()
	var text strings.Builder
	for d, err := range o.model.Stream(ctx, in.Request) {
		if err != nil {
			_ = emit(Part{Type: PartError, Error: err.Error()}) // the step's error says it all if this fails too
			return Response{}, err
		}
		c.add(d)
		if d.Text == "" {
			continue
		}
		text.WriteString(d.Text)
		if err := watch.update(outputText(text.String()), ds); err != nil {
			return Response{}, err
		}
	}
	resp, err := c.result()
	if err != nil {
		return Response{}, workflow.Fatal(err)
	}
	if err := ds.final(outputJSON(resp.Message.Text)); err != nil {
		_ = emit(Part{Type: PartError, Error: err.Error()})
		// One wrapped error: the log's error codec keeps a single chain,
		// and ErrInvalidOutput is the one a caller matches.
		return Response{}, workflow.Fatal(fmt.Errorf("%w: %s", ErrInvalidOutput, err.Error()))
	}
	return resp, emit(Part{Type: PartFinishStep, Usage: &resp.Usage, FinishReason: resp.FinishReason})
}

// outputText is the model's answer from its first brace: models often
// put the object in a Markdown code fence.
func outputText(text string) string {
	if i := strings.IndexByte(text, '{'); i >= 0 {
		return text[i:]
	}
	return ""
}

// outputJSON is the complete answer's object, fence and all stripped.
func outputJSON(text string) json.RawMessage {
	text = outputText(text)
	if i := strings.LastIndexByte(text, '}'); i >= 0 {
		text = text[:i+1]
	}
	return json.RawMessage(text)
}
