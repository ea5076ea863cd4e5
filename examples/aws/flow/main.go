// Command flow is the flow function of the examples' stack: the World
// stack's FlowFunction (template.yaml) built from this package
// (scripts/local.sh: FLOW_DIR=examples FLOW_PKG=./aws/flow). Triggered by
// the workflow queue, it replays runs and runs their steps: the
// workflows of examples/lambdaapp's registry, the flight agent's among
// them. An application's own flow function is the same few lines naming
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
	settings, err := readSettings(os.Getenv("FLOW_SETTINGS"))
	if err != nil {
		slog.Error("flow: FLOW_SETTINGS", "err", err)
		os.Exit(1)
	}
	useFlightModel(cfg, settings.Get("model"), settings.Get("bedrock-endpoint"))
	flowhandler.Start(workflow.WorkerOptions{Registry: lambdaapp.Workflows})
}
