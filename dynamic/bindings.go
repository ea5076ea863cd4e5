package dynamic

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
)

// bindingNames are the names a source can use beyond Starlark's
// universe. Everything durable or deterministic comes through them; there
// is no other way out of the interpreter.
var bindingNames = []string{
	"steps", "spawn", "join", "first", "sleep", "timer", "hook",
	"now", "random", "uuid", "attributes", "set_attributes", "write", "json",
}

func isBinding(name string) bool { return slices.Contains(bindingNames, name) }

func (rt *runtime) bindings() starlark.StringDict {
	return starlark.StringDict{
		"steps":          &stepsValue{rt: rt},
		"spawn":          starlark.NewBuiltin("spawn", rt.spawn),
		"join":           starlark.NewBuiltin("join", rt.join),
		"first":          starlark.NewBuiltin("first", rt.first),
		"sleep":          starlark.NewBuiltin("sleep", rt.sleep),
		"timer":          starlark.NewBuiltin("timer", rt.timer),
		"hook":           starlark.NewBuiltin("hook", rt.hook),
		"now":            starlark.NewBuiltin("now", rt.now),
		"random":         starlark.NewBuiltin("random", rt.random),
		"uuid":           starlark.NewBuiltin("uuid", rt.uuid),
		"attributes":     starlark.NewBuiltin("attributes", rt.attributes),
		"set_attributes": starlark.NewBuiltin("set_attributes", rt.setAttributes),
		"write":          starlark.NewBuiltin("write", rt.write),
		"json":           starjson.Module,
	}
}

// callStep issues a step call: a single positional argument is the step's
// input, keyword arguments make an object of it, none sends null.
func (rt *runtime) callStep(th *starlark.Thread, alias string, args starlark.Tuple, kwargs []starlark.Tuple) (*future, error) {
	var in starlark.Value = starlark.None
	switch {
	case len(args) > 1 || (len(args) == 1 && len(kwargs) > 0):
		return nil, fmt.Errorf("steps.%s: give one argument or keyword arguments, not both", alias)
	case len(args) == 1:
		in = args[0]
	case len(kwargs) > 0:
		d := starlark.NewDict(len(kwargs))
		for _, kv := range kwargs {
			_ = d.SetKey(kv[0], kv[1]) // string keys: cannot fail
		}
		in = d
	}
	raw, err := encode(th, in)
	if err != nil {
		return nil, fmt.Errorf("steps.%s: the input: %w", alias, err)
	}
	return rt.issueStep(th, rt.steps[alias], "steps."+alias, raw)
}

func (rt *runtime) issueStep(th *starlark.Thread, def *engine.StepDef, what string, input json.RawMessage) (*future, error) {
	if rt.calls++; rt.calls > rt.src.MaxSteps {
		return nil, fmt.Errorf("%s: the run has made its %d step calls, its limit (dynamic.WithMaxSteps)", what, rt.src.MaxSteps)
	}
	op := rt.c.CallStep(def, input, site(th))
	rt.durable(th)
	return &future{rt: rt, op: op, what: what}, nil
}

// spawn(steps.alias, input) starts a step and returns its future, so that
// several run in parallel; spawn(fn, args...) runs a function of the
// source beside the rest (a branch that calls steps and waits of its
// own). join or first waits for them.
func (rt *runtime) spawn(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("spawn: the first argument is a step (steps.alias) or a function")
	}
	switch fn := args[0].(type) {
	case *stepFn:
		return rt.callStep(th, fn.alias, args[1:], kwargs)
	case *starlark.Function:
		return rt.spawnFunction(fn, args[1:], kwargs), nil
	}
	return nil, fmt.Errorf("spawn: got %s, want a step (steps.alias) or a function", args[0].Type())
}

// awaitables reads first's and join's one argument: a list of futures and
// hooks.
func awaitables(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) ([]awaitable, error) {
	var items starlark.Iterable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &items); err != nil {
		return nil, err
	}
	var out []awaitable
	it := items.Iterate()
	defer it.Done()
	var v starlark.Value
	for it.Next(&v) {
		a, ok := v.(awaitable)
		if !ok {
			return nil, fmt.Errorf("%s: got %s, want futures and hooks", b.Name(), v.Type())
		}
		out = append(out, a)
	}
	return out, nil
}

// join(futures) waits for every future, in order, and returns their
// results; the first failure fails it.
func (rt *runtime) join(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	items, err := awaitables(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	results := make([]starlark.Value, len(items))
	for i, a := range items {
		if results[i], err = a.take(th); err != nil {
			return nil, err
		}
	}
	return starlark.NewList(results), nil
}

// first(items) waits until one of the futures or hooks is ready and
// returns (index, value) of the first ready one, in list order: the same
// choice on every replay, since results reach the run in log order.
func (rt *runtime) first(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	items, err := awaitables(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("first: nothing to wait for")
	}
	readyAt := func() int {
		return slices.IndexFunc(items, awaitable.ready)
	}
	rt.c.Block(func() bool { return readyAt() >= 0 })
	i := readyAt()
	v, err := items[i].take(th)
	if err != nil {
		return nil, err
	}
	return starlark.Tuple{starlark.MakeInt(i), v}, nil
}

// duration reads a duration: a number of seconds, or a string in Go's
// syntax ("1h30m") with "d" for days.
func duration(name string, v starlark.Value) (time.Duration, error) {
	switch v := v.(type) {
	case starlark.Int, starlark.Float:
		secs, _ := starlark.AsFloat(v)
		return time.Duration(secs * float64(time.Second)), nil
	case starlark.String:
		s := string(v)
		if days, ok := strings.CutSuffix(s, "d"); ok {
			n, err := strconv.ParseFloat(days, 64)
			if err == nil {
				return time.Duration(n * 24 * float64(time.Hour)), nil
			}
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a duration (\"90s\", \"15m\", \"2d\" or seconds)", name, s)
		}
		return d, nil
	}
	return 0, fmt.Errorf("%s: got %s, want a duration (\"15m\") or seconds", name, v.Type())
}

func (rt *runtime) timerOp(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (*future, error) {
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
		return nil, err
	}
	d, err := duration(b.Name(), v)
	if err != nil {
		return nil, err
	}
	op := rt.c.Sleep(d, site(th))
	rt.durable(th)
	return &future{rt: rt, op: op, what: "timer(" + d.String() + ")"}, nil
}

// sleep(d) waits durably: a long sleep suspends the run at no cost.
func (rt *runtime) sleep(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	f, err := rt.timerOp(th, b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return f.take(th)
}

// timer(d) is a future that is ready once d has passed: first([h, timer("1d")])
// waits for a hook with a deadline.
func (rt *runtime) timer(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return rt.timerOp(th, b, args, kwargs)
}

// hook(token=None, metadata=None) creates a hook that outside code resumes
// with workflow.ResumeHook(token, payload); h.receive() waits for its next
// payload. Give a token the caller can recompute (from the input), since
// the resumer needs it; without one the engine generates it (h.token).
func (rt *runtime) hook(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var token string
	var metadata starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "token?", &token, "metadata?", &metadata); err != nil {
		return nil, err
	}
	var meta json.RawMessage
	if metadata != starlark.None {
		var err error
		if meta, err = encode(th, metadata); err != nil {
			return nil, fmt.Errorf("hook: metadata: %w", err)
		}
	}
	op := rt.c.CreateHook(engine.HookOptions{Token: token, Metadata: meta}, site(th))
	rt.durable(th)
	return &hookValue{rt: rt, op: op}, nil
}

// now() is the run's deterministic time (RFC 3339, UTC): when the last
// event it has seen was recorded, the same on every replay.
func (rt *runtime) now(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.String(rt.c.Now().UTC().Format(time.RFC3339Nano)), nil
}

// random() is a float in [0, 1) from the run's seeded source.
func (rt *runtime) random(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.Float(rt.c.Rand().Float64()), nil
}

// uuid() is a version 4 UUID from the run's seeded source.
func (rt *runtime) uuid(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.String(rt.c.UUID()), nil
}

// attributes() is a dict of the run's attributes as it was started.
func (rt *runtime) attributes(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	attrs := rt.c.Attributes()
	d := starlark.NewDict(len(attrs))
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		_ = d.SetKey(starlark.String(k), starlark.String(attrs[k]))
	}
	return d, nil
}

// set_attributes(key="value", ...) records string attributes on the run,
// searchable with ListRuns.
func (rt *runtime) setAttributes(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("set_attributes: give the attributes as keyword arguments")
	}
	attrs := map[string]string{}
	for _, kv := range kwargs {
		v, ok := starlark.AsString(kv[1])
		if !ok {
			return nil, fmt.Errorf("set_attributes: %s: got %s, want a string", kv[0], kv[1].Type())
		}
		attrs[string(kv[0].(starlark.String))] = v
	}
	if err := engine.CheckAttributes(attrs); err != nil {
		return nil, err
	}
	rt.c.SetAttributes(attrs, site(th))
	rt.durable(th)
	return starlark.None, nil
}

// internalStepPrefix names the steps the bindings run themselves; no
// alias may be bound to them.
const internalStepPrefix = "dynamic."

type writeInput struct {
	Namespace string          `json:"namespace,omitempty"`
	Value     json.RawMessage `json:"value"`
}

// writeStep appends one value to a run stream. Writing is a step so that
// it happens once, however often the source is replayed.
var writeStep = workflow.DefineStep(internalStepPrefix+"write", func(ctx context.Context, in writeInput) (struct{}, error) {
	w, err := workflow.Writer[json.RawMessage](ctx, in.Namespace)
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, w.Write(in.Value)
})

// write(value, namespace="") appends a JSON value to the run's stream
// (Run.Readable reads it); it counts as a step call.
func (rt *runtime) write(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	var namespace string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &v, "namespace?", &namespace); err != nil {
		return nil, err
	}
	raw, err := encode(th, v)
	if err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	def, _ := engine.Global.Step(writeStep.Name())
	f, err := rt.issueStep(th, def, "write", mustJSON(writeInput{Namespace: namespace, Value: raw}))
	if err != nil {
		return nil, err
	}
	if _, err := f.take(th); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func mustJSON(v writeInput) json.RawMessage {
	b, _ := json.Marshal(v) // a string and a valid raw message: cannot fail
	return b
}
