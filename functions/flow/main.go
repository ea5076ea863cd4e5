// Command flow is the flow function of template.yaml: triggered by the
// workflow queue, it replays runs and runs their steps. It serves the
// workflows of examples/lambdaapp; an application's own flow function is
// the same few lines importing its own workflows.
package main

import (
	"github.com/lambdaworkflow/workflow"
	_ "github.com/lambdaworkflow/workflow/examples/lambdaapp" // defines the workflows this function serves
	"github.com/lambdaworkflow/workflow/lambda/flowhandler"
)

func main() { flowhandler.Start(workflow.WorkerOptions{}) }
