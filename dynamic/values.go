package dynamic

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"go.starlark.net/starlark"
)

// The values the bindings hand to a source. None can be hashed or
// mutated by it; they hold the run's ops.

// stepsValue is the steps binding: one callable per alias the run was
// given, and nothing else.
type stepsValue struct{ rt *runtime }

func (s *stepsValue) String() string        { return "<steps>" }
func (s *stepsValue) Type() string          { return "steps" }
func (s *stepsValue) Freeze()               {}
func (s *stepsValue) Truth() starlark.Bool  { return true }
func (s *stepsValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: steps") }
func (s *stepsValue) AttrNames() []string   { return slices.Sorted(maps.Keys(s.rt.steps)) }

func (s *stepsValue) Attr(alias string) (starlark.Value, error) {
	if _, ok := s.rt.steps[alias]; !ok {
		return nil, fmt.Errorf("steps has no alias %q (given: %s)", alias, strings.Join(s.AttrNames(), ", "))
	}
	return &stepFn{rt: s.rt, alias: alias}, nil
}

// stepFn calls one step and waits for its result; spawn starts it without
// waiting.
type stepFn struct {
	rt    *runtime
	alias string
}

func (f *stepFn) String() string        { return "<step " + f.alias + ">" }
func (f *stepFn) Type() string          { return "step" }
func (f *stepFn) Name() string          { return "steps." + f.alias }
func (f *stepFn) Freeze()               {}
func (f *stepFn) Truth() starlark.Bool  { return true }
func (f *stepFn) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: step") }

func (f *stepFn) CallInternal(th *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	fut, err := f.rt.callStep(th, f.alias, args, kwargs)
	if err != nil {
		return nil, err
	}
	return fut.result(th) // Starlark names the step in the error
}

// awaitable is what first() and join() wait on.
type awaitable interface {
	starlark.Value
	ready() bool
	// take waits for the value: a future's result, a hook's next message.
	take(th *starlark.Thread) (starlark.Value, error)
}

// future is a durable call started without waiting: a step from spawn, a
// timer.
type future struct {
	rt   *runtime
	op   *engine.Op
	what string
}

func (f *future) String() string        { return "<future " + f.what + ">" }
func (f *future) Type() string          { return "future" }
func (f *future) Freeze()               {}
func (f *future) Truth() starlark.Bool  { return true }
func (f *future) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: future") }
func (f *future) AttrNames() []string   { return []string{"wait"} }
func (f *future) ready() bool           { return f.op.Done() }

func (f *future) Attr(name string) (starlark.Value, error) {
	if name != "wait" {
		return nil, nil
	}
	return method("wait", f.take), nil
}

func (f *future) take(th *starlark.Thread) (starlark.Value, error) {
	v, err := f.result(th)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.what, err)
	}
	return v, nil
}

func (f *future) result(th *starlark.Thread) (starlark.Value, error) {
	out, errRaw := f.rt.c.Await(f.op)
	f.rt.durable(th)
	if errRaw != nil {
		return nil, f.rt.c.DecodeError(errRaw)
	}
	return decode(th, out)
}

// hookValue is a hook the source created: its token, and its messages one
// at a time.
type hookValue struct {
	rt *runtime
	op *engine.Op
}

func (h *hookValue) String() string        { return "<hook>" }
func (h *hookValue) Type() string          { return "hook" }
func (h *hookValue) Freeze()               {}
func (h *hookValue) Truth() starlark.Bool  { return true }
func (h *hookValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: hook") }
func (h *hookValue) AttrNames() []string   { return []string{"receive", "token"} }
func (h *hookValue) ready() bool           { return h.op.HookReady() }

func (h *hookValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "token":
		h.rt.c.Block(h.op.Created)
		return starlark.String(h.op.Name), nil
	case "receive":
		return method("receive", h.take), nil
	}
	return nil, nil
}

func (h *hookValue) take(th *starlark.Thread) (starlark.Value, error) {
	msg, ok, owner, forcedBy := h.rt.c.NextHookMessage(h.op)
	h.rt.durable(th)
	switch {
	case owner != "":
		return nil, &workflow.HookConflictError{Token: h.op.Name, OwnerRunID: owner}
	case forcedBy != "":
		return nil, &workflow.HookConflictError{Token: h.op.Name, OwnerRunID: forcedBy, Forced: true}
	case !ok:
		return nil, workflow.ErrHookDisposed
	}
	return decode(th, msg.Payload)
}

// method is a value's method taking no arguments.
func method(name string, fn func(*starlark.Thread) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
			return nil, err
		}
		return fn(th)
	})
}
