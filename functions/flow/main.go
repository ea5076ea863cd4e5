// Command flow is the flow function template.yaml deploys when it is
// built with no flow function of one's own (FLOW_DIR and FLOW_PKG,
// functions/lambda.mk): triggered by the workflow queue, it replays runs
// and runs their steps. It defines no workflow of its own and runs
// dynamic workflows (package dynamic) without steps, so that a stack
// deployed as it is can run something; an application's flow function is
// the same few lines naming its own registry (docs/AWS.md, "Your own
// workflows").
//
// Dynamic source runs with this function's privileges (the World's, no
// more): the stack seals runs (PayloadCodecs), so a source written into
// the table past a client with the stack's key is refused, not run.
package main

import (
	"context"
	"log/slog"

	"github.com/lambdaworkflow/workflow"
	_ "github.com/lambdaworkflow/workflow/dynamic" // links the interpreter dynamic runs need
	"github.com/lambdaworkflow/workflow/lambda/flowhandler"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/otel"
)

func main() {
	lambdalog.Setup()
	if err := otel.SetupFromEnv(context.Background()); err != nil {
		slog.Error("flow: telemetry stays off", "err", err)
	}
	// An empty registry: dynamic runs need no registered workflow.
	flowhandler.Start(workflow.WorkerOptions{Registry: workflow.NewRegistry(), DynamicWorkflows: true})
}
