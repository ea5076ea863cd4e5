package lambdaapp

import (
	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/flight"
)

// Workflows is what a worker for this application runs: the order
// workflows, and the chat session of the flight agent the stack deploys
// beside the order API (examples/flight, examples/aws/flight).
var Workflows = workflow.NewRegistry(ProcessOrder, Reminder, flight.Session.Workflow())
