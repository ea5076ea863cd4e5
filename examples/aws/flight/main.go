// Command flight is the flight function of the examples' stack
// (examples/aws/template.yaml): behind a Function URL with InvokeMode
// RESPONSE_STREAM, it serves the example flight agent's chat sessions and
// approvals (examples/flight) and streams each turn to its caller as the
// model writes it. The session's workflow, model calls included, runs in
// the flow function (examples/aws/flow).
package main

import (
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/functions/coldstart"
	"github.com/lambdaworkflow/workflow/otel"
)

func main() {
	// A sealed run's messages are sealed with the run's key.
	client, _ := coldstart.Client("flight")
	lambdaurl.Start(otel.FlushAfter(flight.Handler(client)))
}
