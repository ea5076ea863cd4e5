package agent

import (
	"fmt"
	"slices"

	"github.com/lambdaworkflow/workflow"
)

// Agent is a model with instructions and tools, run durably inside a
// workflow: every model call is a step, recorded once and never billed
// again on replay, and every tool call is a step or workflow code. Define
// an agent once, at package level, like a step: its name names the steps
// in the log.
type Agent struct {
	name      string
	model     Model
	cfg       config
	tools     map[string]ToolDef
	specs     []ToolSpec
	call      *workflow.Step[Request, Response]
	finish    *workflow.Step[finishInput, struct{}]
	approvals map[string]bool
	// interrupts are the contracts the model may choose, by name.
	interrupts map[string]interruptContract
	// outputs are the output contracts, by name, and passes the
	// structured calls of those that stream.
	outputs map[string]outputContract
	passes  map[string]outputPass
	// mustReturn is set if a Run ends only with a return contract.
	mustReturn bool
}

// Option configures an Agent.
type Option func(*config)

type config struct {
	system        string
	tools         []ToolDef
	interrupts    []InterruptDef
	outputs       []OutputDef
	maxInterrupts int
	maxSteps      int
	namespace     string
	settings      Settings
	step          []workflow.StepOption
}

// DefaultMaxSteps bounds the model calls of one Run by default.
const DefaultMaxSteps = 20

// DefaultNamespace is the run stream the agent writes its parts to.
const DefaultNamespace = "agent"

// WithSystem sets the system prompt.
func WithSystem(prompt string) Option { return func(c *config) { c.system = prompt } }

// WithTools gives the model tools to call.
func WithTools(tools ...ToolDef) Option {
	return func(c *config) { c.tools = append(c.tools, tools...) }
}

// WithMaxSteps bounds the model calls of one Run (default
// [DefaultMaxSteps]).
func WithMaxSteps(n int) Option { return func(c *config) { c.maxSteps = max(n, 1) } }

// WithNamespace sets the run stream the agent writes its [Part]s to
// (default [DefaultNamespace]).
func WithNamespace(ns string) Option { return func(c *config) { c.namespace = ns } }

// WithSettings sets the model call options.
func WithSettings(s Settings) Option { return func(c *config) { c.settings = s } }

// WithModelStepOptions sets the model call step's retry policy. Provider
// errors that retrying cannot fix (a bad request, a refused key) are not
// retried; throttling waits as long as the provider asks.
func WithModelStepOptions(opts ...workflow.StepOption) Option {
	return func(c *config) { c.step = append(c.step, opts...) }
}

// New defines an agent. Its model calls are the step "agent."+name.
func New(name string, model Model, opts ...Option) *Agent {
	cfg := config{maxSteps: DefaultMaxSteps, namespace: DefaultNamespace}
	for _, o := range opts {
		o(&cfg)
	}
	a := &Agent{name: name, model: model, cfg: cfg, tools: map[string]ToolDef{}, approvals: map[string]bool{}, interrupts: map[string]interruptContract{}}
	for _, t := range cfg.tools {
		spec := a.offer(t.Spec())
		a.tools[spec.Name] = t
		a.approvals[spec.Name] = t.needsApproval()
	}
	for _, i := range cfg.interrupts {
		a.interrupts[a.offer(i.Spec()).Name] = i.contract()
	}
	a.outputs, a.passes = map[string]outputContract{}, map[string]outputPass{}
	for _, d := range cfg.outputs {
		c := d.outputContract()
		a.outputs[a.offer(d.Spec()).Name] = c
		if c.newPass != nil {
			a.passes[c.name] = c.newPass(name, model, cfg)
		}
		a.mustReturn = a.mustReturn || c.returns
	}
	a.call = workflow.DefineStep("agent."+name, a.callModel, cfg.step...)
	a.finish = workflow.DefineStep("agent."+name+".finish", a.writeFinish)
	return a
}

// offer adds a tool or an interrupt to what the model sees. Their names
// are one namespace: the model calls either by name.
func (a *Agent) offer(spec ToolSpec) ToolSpec {
	if slices.ContainsFunc(a.specs, func(s ToolSpec) bool { return s.Name == spec.Name }) {
		panic(fmt.Sprintf("agent %q: two tools or interrupts are named %q", a.name, spec.Name))
	}
	a.specs = append(a.specs, spec)
	return spec
}

// Name returns the agent's name.
func (a *Agent) Name() string { return a.name }

// Namespace returns the run stream the agent writes to.
func (a *Agent) Namespace() string { return a.cfg.namespace }

// Result is what a Run came to.
type Result struct {
	// Messages is the whole conversation: the input, then every model
	// answer and tool result. Pass it to the next Run to go on talking.
	Messages []Message `json:"messages"`
	// Text is the last answer's text.
	Text         string       `json:"text"`
	Usage        Usage        `json:"usage"`
	FinishReason FinishReason `json:"finishReason"`
	// Responses are the model calls, in order, with their metadata and
	// warnings.
	Responses []Response `json:"responses"`
	// Interrupts are the interrupts the model chose and a person
	// answered, in order, with their validated requests and responses.
	Interrupts []InterruptRecord `json:"interrupts,omitempty"`
	// Emissions are the validated values the model emitted through
	// output contracts ([WithOutputs]), in order; Return is the return
	// contract's value that ended the Run, if one did.
	Emissions []Emission `json:"emissions,omitempty"`
	Return    *Emission  `json:"return,omitempty"`
}

// RunOption configures one Run.
type RunOption func(*runConfig)

type runConfig struct{ prepare PrepareStep }

// PrepareStep is called from workflow code before each model call of a
// Run with the call's number (1 on the first) and the conversation so
// far, and returns the conversation to send, which the Run then goes on
// with: the place to inject messages that arrived while the model or its
// tools worked (a queue a hook's listener fills), as prepareStep is. It
// is workflow code: deterministic, and free to wait or call steps.
type PrepareStep func(ctx workflow.Context, step int, messages []Message) []Message

// PrepareEachStep sets the Run's [PrepareStep].
func PrepareEachStep(f PrepareStep) RunOption { return func(c *runConfig) { c.prepare = f } }

// Run talks with the model from workflow code: it calls the model, runs
// the tools it asks for (in parallel), gives it their results, and so on
// until it answers without a tool call or has been called as many times
// as [WithMaxSteps] allows. It fails only when a model call fails for
// good; a tool's failure is a result the model is told about.
func (a *Agent) Run(ctx workflow.Context, messages []Message, opts ...RunOption) (*Result, error) {
	var rc runConfig
	for _, o := range opts {
		o(&rc)
	}
	res := &Result{Messages: slices.Clone(messages)}
	for step := 1; ; step++ {
		if rc.prepare != nil {
			res.Messages = rc.prepare(ctx, step, res.Messages)
		}
		resp, err := a.call.Call(ctx, Request{System: a.cfg.system, Messages: res.Messages, Tools: a.specs, Settings: a.cfg.settings})
		if err != nil {
			return res, err
		}
		res.Responses = append(res.Responses, resp)
		res.Messages = append(res.Messages, resp.Message)
		res.Usage = res.Usage.Add(resp.Usage)
		res.Text, res.FinishReason = resp.Message.Text, resp.FinishReason
		if len(resp.Message.ToolCalls) == 0 {
			if !a.mustReturn {
				return res, nil
			}
			res.Messages = append(res.Messages, UserMessage(a.returnReminder()))
			if step >= a.cfg.maxSteps {
				return a.stop(ctx, res, nil, FinishMaxSteps)
			}
			continue
		}
		results, passes := a.runTools(ctx, resp.Message.ToolCalls, res.Messages, len(res.Interrupts))
		res.Interrupts = append(res.Interrupts, a.interruptRecords(resp.Message.ToolCalls, results)...)
		for _, p := range passes {
			step++ // a streamed output's pass is a model call too
			res.Responses = append(res.Responses, p)
			res.Usage = res.Usage.Add(p.Usage)
		}
		emitted := a.emissions(resp.Message.ToolCalls, results)
		res.Emissions = append(res.Emissions, emitted...)
		res.Messages = append(res.Messages, Message{Role: RoleTool, ToolResults: results})
		if i := slices.IndexFunc(emitted, func(e Emission) bool { return e.Returns }); i >= 0 {
			res.Return = &emitted[i]
			return a.stop(ctx, res, results, FinishStop)
		}
		if step >= a.cfg.maxSteps {
			return a.stop(ctx, res, results, FinishMaxSteps)
		}
	}
}

// stop ends a Run that no model answer ended, streaming the last tool
// results, which no model call will, and the finish.
func (a *Agent) stop(ctx workflow.Context, res *Result, results []ToolResult, reason FinishReason) (*Result, error) {
	res.FinishReason = reason
	_, err := a.finish.Call(ctx, finishInput{Results: results, Reason: reason})
	return res, err
}

// runTools runs a model answer's tool calls side by side and returns
// their results in the calls' order, and the responses of the streamed
// output passes they made. interrupted is how many interrupts the Run
// went through before.
func (a *Agent) runTools(ctx workflow.Context, calls []ToolCall, messages []Message, interrupted int) ([]ToolResult, []Response) {
	futures := make([]workflow.Future[ToolResult], len(calls))
	passes := make([]*Response, len(calls))
	for i, call := range calls {
		if c, ok := a.outputs[call.Name]; ok {
			futures[i] = workflow.Go(ctx, func(ctx workflow.Context) (ToolResult, error) {
				r, pass := a.emit(ctx, c, call, messages)
				passes[i] = pass
				return r, nil
			})
			continue
		}
		if c, ok := a.interrupts[call.Name]; ok {
			interrupted++
			over := a.cfg.maxInterrupts > 0 && interrupted > a.cfg.maxInterrupts
			futures[i] = workflow.Go(ctx, func(ctx workflow.Context) (ToolResult, error) {
				if over {
					return ToolResult{CallID: call.ID, Name: call.Name, Outcome: Denied, Code: InterruptLimitCode, Error: "no more questions may be asked in this conversation"}, nil
				}
				return awaitInterrupt(ctx, c, call), nil
			})
			continue
		}
		futures[i] = workflow.Go(ctx, func(ctx workflow.Context) (ToolResult, error) {
			return a.runTool(ctx, call, messages), nil
		})
	}
	results, _ := workflow.Gather(ctx, futures...) // runTool never fails: its failures are results
	var responses []Response
	for _, p := range passes {
		if p != nil {
			responses = append(responses, *p)
		}
	}
	return results, responses
}

func (a *Agent) runTool(ctx workflow.Context, call ToolCall, messages []Message) ToolResult {
	tool := a.tools[call.Name]
	if tool == nil {
		return ToolResult{CallID: call.ID, Name: call.Name, Outcome: Fault, Error: fmt.Sprintf("there is no tool named %q", call.Name)}
	}
	if tool.needsApproval() {
		approved, refused := awaitApproval(ctx, call, tool.approvalLink())
		if refused != nil {
			return *refused
		}
		call = approved
	}
	return tool.run(ctx, call, ToolCallInfo{ID: call.ID, Name: call.Name, Messages: messages})
}
