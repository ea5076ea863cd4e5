// Command flow is the flow function of template.yaml: triggered by the
// workflow queue, it replays runs and runs their steps. It serves the
// workflows of examples/lambdaapp's registry; an application's own flow
// function is the same few lines naming its own.
package main

import (
	"context"
	"log/slog"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/lambda/flowhandler"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/otel"
)

func main() {
	lambdalog.Setup()
	if err := otel.SetupFromEnv(context.Background()); err != nil {
		slog.Error("flow: telemetry stays off", "err", err)
	}
	flowhandler.Start(workflow.WorkerOptions{Registry: lambdaapp.Workflows})
}
