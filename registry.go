package workflow

import "github.com/lambdaworkflow/workflow/internal/engine"

// Registry holds workflows under the names their runs' logs record. A
// [Worker] runs the workflows of the registry it is given
// ([WorkerOptions].Registry), and without one every workflow defined in
// the binary: [Define] adds each to a default registry as well.
//
// An explicit registry names what a worker serves where the code says so,
// so a main that builds its worker from one needs no blank imports of the
// packages defining the workflows:
//
//	var Workflows = workflow.NewRegistry(Checkout, Refund) // package orders
//
//	worker := workflow.NewWorker(w, workflow.WorkerOptions{Registry: orders.Workflows})
//
// Steps are not registered: a workflow's call carries its step.
type Registry struct {
	r *engine.Registry
}

// Definition is a workflow a Registry can hold: a [*Workflow] made with
// [Define].
type Definition interface {
	definition() *engine.WorkflowDef
}

// NewRegistry returns a registry holding the given workflows.
func NewRegistry(workflows ...Definition) *Registry {
	r := &Registry{r: engine.NewRegistry()}
	r.Add(workflows...)
	return r
}

// Add adds workflows to the registry. Two workflows under one name panic,
// as they do in Define: replay could not tell them apart.
func (r *Registry) Add(workflows ...Definition) {
	for _, wf := range workflows {
		r.r.AddWorkflow(wf.definition())
	}
}
