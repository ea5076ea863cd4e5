// Command webhook is the webhook function of template.yaml: behind a
// Function URL with InvokeMode RESPONSE_STREAM, it serves the public
// webhook route and streams each reply to its caller as a step writes it.
// It needs no workflow code, only the World: any application can deploy
// it as it is.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/otel"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world/aws"
)

func main() {
	lambdalog.Setup()
	if err := otel.SetupFromEnv(context.Background()); err != nil {
		slog.Error("webhook: telemetry stays off", "err", err)
	}
	w, err := aws.FromEnv(context.Background())
	if err != nil {
		slog.Error("webhook: cannot build the AWS World", "err", err)
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		slog.Error("webhook: no AWS configuration", "err", err)
		os.Exit(1)
	}
	// A resume of a sealed run seals its payload with the run's key.
	lambdaurl.Start(otel.FlushAfter(newHandler(workflow.NewClient(w, workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(cfg))))))
}

// newHandler serves the webhook route and 404s everything else.
//
// A streamed reply that breaks off midway (its step failed and is being
// retried) makes webhook.Handler panic with http.ErrAbortHandler, to cut
// the response. net/http recovers that panic; lambdaurl runs the handler
// on a goroutine of its own and does not, so the function's process exits
// and the caller sees the stream cut, as intended. The next call pays a
// cold start, a fair price for a rare event.
func newHandler(c *workflow.Client) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(webhook.Pattern, webhook.NewHandler(c))
	return mux
}
