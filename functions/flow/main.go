// Command flow is the flow function of template.yaml: triggered by the
// workflow queue, it replays runs and runs their steps. It serves the
// workflows of examples/lambdaapp's registry; an application's own flow
// function is the same few lines naming its own.
package main

import (
	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/lambda/flowhandler"
)

func main() { flowhandler.Start(workflow.WorkerOptions{Registry: lambdaapp.Workflows}) }
