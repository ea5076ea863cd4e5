// Command flight is the flight function of template.yaml: behind a
// Function URL with InvokeMode RESPONSE_STREAM, it serves the example
// flight agent's chat sessions and approvals (examples/flight) and
// streams each turn to its caller as the model writes it. The session's
// workflow, model calls included, runs in the flow function.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/otel"
	"github.com/lambdaworkflow/workflow/world/aws"
)

func main() {
	lambdalog.Setup()
	if err := otel.SetupFromEnv(context.Background()); err != nil {
		slog.Error("flight: telemetry stays off", "err", err)
	}
	w, err := aws.FromEnv(context.Background())
	if err != nil {
		slog.Error("flight: cannot build the AWS World", "err", err)
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		slog.Error("flight: no AWS configuration", "err", err)
		os.Exit(1)
	}
	// A sealed run's messages are sealed with the run's key.
	lambdaurl.Start(otel.FlushAfter(flight.Handler(workflow.NewClient(w, workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(cfg))))))
}
