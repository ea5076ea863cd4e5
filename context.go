package workflow

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Context is what a workflow function receives. It is not a
// context.Context: workflow code must not do I/O, and everything it can
// do durably hangs off this Context (steps, sleeps, hooks, child runs).
//
// Only pass a Context to workflow-side calls, from the goroutine that runs
// the workflow or from a function started with Go. Steps get an ordinary
// context.Context instead.
type Context interface {
	// RunID returns the ID of the running workflow run.
	RunID() string
	// WorkflowName returns the name the workflow was defined with.
	WorkflowName() string

	engine() *engine.Ctx
}

type workflowContext struct{ e *engine.Ctx }

func (c workflowContext) RunID() string        { return c.e.RunID() }
func (c workflowContext) WorkflowName() string { return c.e.WorkflowName() }
func (c workflowContext) engine() *engine.Ctx  { return c.e }

// callSite names the user code that made a durable call, for determinism
// errors: the caller of the exported function that calls callSite (which
// must therefore call it itself, not through a helper).
func callSite() string {
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}
