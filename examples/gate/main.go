// Command gate is the deploy gate of the example application
// (examples/lambdaapp) on AWS: built from the code about to be deployed,
// it replays every run in flight in the stack's World against that code
// and exits 1 if one would fail, naming the run, the slot, the call its
// log records and the call the code makes instead, with its file:line.
// scripts/local.sh runs it before each sam deploy.
//
//	WORKFLOW_TABLE=… WORKFLOW_QUEUE_URL=… WORKFLOW_BUCKET=… WORKFLOW_PAYLOAD_KMS_KEY=… go -C examples run ./gate
//
// WORKFLOW_PAYLOAD_KMS_KEY (the stack's PayloadKeyArn output) opens the
// logs of sealed runs; a sealed run it cannot open fails the gate. An
// application's gate is this file with its own registry.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/aws"
)

func main() {
	ctx := context.Background()
	w, err := aws.FromEnv(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(2)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(2)
	}
	failures, err := gate(ctx, w, os.Stdout, workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(cfg)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate: nothing checked:", err)
		os.Exit(2)
	}
	if failures > 0 {
		os.Exit(1)
	}
}

// gate replays the runs in flight in w on the example's workflows, writes
// the report to out and returns how many would fail.
func gate(ctx context.Context, w world.World, out io.Writer, opts ...workflow.ClientOption) (int, error) {
	report, err := workflow.ReplayRunning(ctx, w, lambdaapp.Workflows, opts...)
	if err != nil {
		return 0, err
	}
	if _, err := report.WriteTo(out); err != nil {
		return 0, err
	}
	return len(report.Failures), nil
}
