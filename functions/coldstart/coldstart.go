// Package coldstart is what an HTTP function on the stack's World does
// once per Lambda instance before it serves: structured logs, telemetry,
// and a workflow client on the World the environment names, sealing
// payloads with the run's key where the stack gives one. The webhook
// function uses it, and so do functions of one's own beside the stack's
// (the examples' API and flight functions). A failure here ends the
// instance, so Lambda reports the init error instead of serving with half
// a setup.
package coldstart

import (
	"context"
	"log/slog"
	"os"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/otel"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// Client sets up logs and telemetry and returns a client on the AWS World
// with the payload codec of WORKFLOW_PAYLOAD_KMS_KEY, and the SDK
// configuration for the function's other AWS clients. function names the
// function in its log lines.
func Client(function string) (*workflow.Client, sdkaws.Config) {
	lambdalog.Setup()
	ctx := context.Background()
	if err := otel.SetupFromEnv(ctx); err != nil {
		slog.Error(function+": telemetry stays off", "err", err)
	}
	w, err := aws.FromEnv(ctx)
	if err != nil {
		slog.Error(function+": cannot build the AWS World", "err", err)
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		slog.Error(function+": no AWS configuration", "err", err)
		os.Exit(1)
	}
	return workflow.NewClient(w, workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(cfg))), cfg
}
