// Command webhook is the webhook function of template.yaml: behind a
// Function URL with InvokeMode RESPONSE_STREAM, it serves the public
// webhook route and streams each reply to its caller as a step writes it.
// It needs no workflow code, only the World: any application can deploy
// it as it is.
package main

import (
	"net/http"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/functions/coldstart"
	"github.com/lambdaworkflow/workflow/otel"
	"github.com/lambdaworkflow/workflow/webhook"
)

func main() {
	// A resume of a sealed run seals its payload with the run's key.
	client, _ := coldstart.Client("webhook")
	lambdaurl.Start(otel.FlushAfter(newHandler(client)))
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
