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
	if c.UnsealedCode() {
		return nil, ErrUnsealed
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
	rt.durable(rt.thread)
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
	rt.thread = rt.newThread()
	return rt, nil
}

// newThread is a Starlark thread of the run: its main one, or a branch
// spawn started.
func (rt *runtime) newThread() *starlark.Thread {
	return &starlark.Thread{
		Name:  rt.c.RunID(),
		Print: func(th *starlark.Thread, msg string) { rt.c.Logger().Info(msg, "source", site(th)) },
		OnMaxSteps: func(th *starlark.Thread) {
			th.Cancel(fmt.Sprintf("the workflow computed for %d Starlark steps without a durable call (the run's limit: dynamic.WithMaxExecutionSteps)", rt.src.MaxExecutionSteps))
		},
	}
}

// durable gives a thread a fresh computation budget: the limit bounds what
// runs between durable calls, not a whole run, which may be long.
func (rt *runtime) durable(th *starlark.Thread) {
	th.SetMaxExecutionSteps(th.ExecutionSteps() + rt.src.MaxExecutionSteps)
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

// branch is a function spawn runs beside the rest of the source, on a
// coroutine and a thread of its own; join and first wait for it.
type branch struct {
	name  string
	done  bool
	value starlark.Value
	err   error
	rt    *runtime
}

func (rt *runtime) spawnFunction(fn starlark.Callable, args starlark.Tuple, kwargs []starlark.Tuple) *branch {
	b := &branch{name: fn.Name(), rt: rt}
	rt.c.Go(func(*engine.Ctx) {
		th := rt.newThread()
		rt.durable(th)
		b.value, b.err = starlark.Call(th, fn, args, kwargs)
		if b.err != nil {
			b.err = sourceFailure(b.err) // its own backtrace, for the thread that joins it
		}
		b.done = true
	})
	return b
}

func (b *branch) String() string        { return "<future " + b.name + "()>" }
func (b *branch) Type() string          { return "future" }
func (b *branch) Freeze()               {}
func (b *branch) Truth() starlark.Bool  { return true }
func (b *branch) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: future") }
func (b *branch) ready() bool           { return b.done }

func (b *branch) take(th *starlark.Thread) (starlark.Value, error) {
	b.rt.c.Block(b.ready)
	b.rt.durable(th)
	if b.err != nil {
		return nil, fmt.Errorf("%s(): %w", b.name, b.err)
	}
	return b.value, nil
}
