// Command flow is the flow function of template.yaml: triggered by the
// workflow queue, it replays runs and runs their steps. It serves the
// workflows of examples/lambdaapp's registry, the flight agent's among
// them; an application's own flow function is the same few lines naming
// its own.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"

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
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		slog.Error("flow: no AWS configuration", "err", err)
		os.Exit(1)
	}
	useFlightModel(cfg, os.Getenv("FLIGHT_MODEL_ID"), os.Getenv("FLIGHT_BEDROCK_ENDPOINT"))
	flowhandler.Start(workflow.WorkerOptions{Registry: lambdaapp.Workflows})
}
