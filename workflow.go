package workflow

import (
	"encoding/json"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Workflow is a defined workflow: deterministic orchestration code that
// takes an I and returns an O. Define it once, at package level, so that
// every process that runs or starts it knows it by the same name.
type Workflow[I, O any] struct {
	name string
	def  *engine.WorkflowDef
}

// Define defines a workflow under a name that is stored in every run's
// log: renaming a workflow orphans its running runs. It adds the workflow
// to the default registry, which a Worker serves unless it is given a
// [Registry] of its own.
//
// The function must be deterministic: given the same results from its
// steps, hooks and timers, it must make the same durable calls in the same
// order. Use Now, Random, UUID and Go instead of time.Now, math/rand and go.
//
// A run is pinned to the deployment that first executes it (see
// [WorkerOptions].Deployment); [WithVersionPolicy] lets runs move forward.
func Define[I, O any](name string, fn func(ctx Context, input I) (O, error), opts ...DefineOption) *Workflow[I, O] {
	var o defineOptions
	for _, opt := range opts {
		opt(&o)
	}
	def := &engine.WorkflowDef{Name: name, Fn: func(c *engine.Ctx, raw json.RawMessage) (json.RawMessage, error) {
		var in I
		if err := decodeJSON(raw, &in); err != nil {
			return nil, Fatal(fmt.Errorf("workflow: workflow %q: decoding input: %w", name, err))
		}
		out, err := fn(workflowContext{c}, in)
		if err != nil {
			return nil, err
		}
		encoded, err := json.Marshal(out)
		if err != nil {
			return nil, Fatal(fmt.Errorf("workflow: workflow %q: encoding result: %w", name, err))
		}
		return encoded, nil
	}, Latest: o.policy == Latest, Limits: o.limit}
	engine.Global.AddWorkflow(def)
	return &Workflow[I, O]{name: name, def: def}
}

// Name returns the workflow's registered name.
func (w *Workflow[I, O]) Name() string { return w.name }

func (w *Workflow[I, O]) definition() *engine.WorkflowDef { return w.def }

func decodeJSON(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
}
