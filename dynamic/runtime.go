package dynamic

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"go.starlark.net/starlark"
)

func init() { engine.RegisterDynamic(run) }

// runtime is one invocation's execution of a dynamic run: the Starlark
// thread, and the run's engine context its bindings call.
type runtime struct {
	c      *engine.Ctx
	src    dynsource.Source
	steps  map[string]*engine.StepDef // by alias
	calls  int                        // step calls made, against src.MaxSteps
	thread *starlark.Thread
}

// run executes a dynamic run's stored code. It is the workflow function of
// every dynamic run, replay included: the code comes from the run's own
// input, never from what the deployment holds now.
func run(c *engine.Ctx, raw json.RawMessage) (json.RawMessage, error) {
	if !c.DynamicWorkflows() {
		return nil, ErrDisabled
	}
	in, err := dynsource.Decode(raw)
	if err != nil {
		return nil, err
	}
	rt, err := newRuntime(c, in.Source)
	if err != nil {
		return nil, err
	}
	prog, err := compile(in.Source.Code, in.Source.Steps)
	if err != nil {
		return nil, fmt.Errorf("dynamic workflow: %w", err)
	}
	rt.durable()
	globals, err := prog.Init(rt.thread, rt.bindings())
	if err != nil {
		return nil, sourceFailure(err)
	}
	fn := globals[entry].(*starlark.Function) // compile checked it is defined
	var args starlark.Tuple
	if fn.NumParams() == 1 {
		arg, err := decode(rt.thread, in.Input)
		if err != nil {
			return nil, fmt.Errorf("dynamic workflow: the input: %w", err)
		}
		args = starlark.Tuple{arg}
	}
	out, err := starlark.Call(rt.thread, fn, args, nil)
	if err != nil {
		return nil, sourceFailure(err)
	}
	return encode(rt.thread, out)
}

func newRuntime(c *engine.Ctx, src dynsource.Source) (*runtime, error) {
	rt := &runtime{c: c, src: src, steps: map[string]*engine.StepDef{}}
	for alias, name := range src.Steps {
		def, ok := engine.Global.Step(name)
		if !ok {
			return nil, fmt.Errorf("dynamic workflow: step alias %q: no step named %q is defined in this deployment", alias, name)
		}
		rt.steps[alias] = def
	}
	rt.thread = &starlark.Thread{
		Name:  c.RunID(),
		Print: func(th *starlark.Thread, msg string) { c.Logger().Info(msg, "source", site(th)) },
		OnMaxSteps: func(th *starlark.Thread) {
			th.Cancel(fmt.Sprintf("the workflow computed for %d Starlark steps without a durable call (the run's limit: dynamic.WithMaxExecutionSteps)", src.MaxExecutionSteps))
		},
	}
	return rt, nil
}

// durable gives the source a fresh computation budget: the limit bounds
// what runs between durable calls, not a whole run, which may be long.
func (rt *runtime) durable() {
	rt.thread.SetMaxExecutionSteps(rt.thread.ExecutionSteps() + rt.src.MaxExecutionSteps)
}

// site is the source position of the call a binding serves, for the
// engine's nondeterminism errors and the run's log lines.
func site(th *starlark.Thread) string { return th.CallFrame(1).Pos.String() }

// sourceError is a failure of the source: its message is the Starlark
// backtrace, so it names every line of the call stack; the cause (a step's
// error, say) stays in the chain.
type sourceError struct {
	trace string
	err   error
}

func (e *sourceError) Error() string { return e.trace }
func (e *sourceError) Unwrap() error { return e.err }

func sourceFailure(err error) error {
	var eval *starlark.EvalError
	if !errors.As(err, &eval) {
		return err
	}
	cause := eval.Unwrap()
	if cause == nil {
		cause = errors.New(eval.Msg)
	}
	return &sourceError{trace: "dynamic workflow failed: " + eval.Backtrace(), err: cause}
}
