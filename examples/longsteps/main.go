// Command longsteps is the Worker outside Lambda of the AWS deployment:
// it serves the stack's LongStepQueue, where the flow function sends the
// runs whose next step declares (WithTimeout) more than any of its
// invocations allows, runs those steps, and drives the runs on; their
// later wake-ups go back to the flow function's queue. Run it on any
// machine with the stack's outputs in its environment:
//
//	WORKFLOW_TABLE=... WORKFLOW_QUEUE_URL=... WORKFLOW_BUCKET=... \
//	WORKFLOW_LONG_STEP_QUEUE_URL=... WORKFLOW_PAYLOAD_KMS_KEY=... go -C examples run ./longsteps
//
// WORKFLOW_PAYLOAD_KMS_KEY is the stack's PayloadKeyArn: the stack seals
// its runs, and a Worker without the key cannot run their steps (its
// credentials need kms:GenerateDataKey and kms:Decrypt on it).
//
// It serves the workflows the stack's flow function does (functions/flow:
// examples/lambdaapp's registry), of the deployment their runs are pinned
// to: build it from the same commit, and set WORKFLOW_DEPLOYMENT to the
// flow function's version ("$LATEST" when it is not published). An
// application's own is the same few lines naming its own registry.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/world/aws"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := aws.FromEnv(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	long, err := w.LongStepQueue()
	if err != nil {
		log.Fatal(err)
	}
	// No MaxInvocation, and a context without a deadline: the Worker's
	// invocations have no time limit, which is the point of it.
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	worker := workflow.NewWorker(w, workflow.WorkerOptions{
		Registry: lambdaapp.Workflows, Queue: long, Deployment: os.Getenv("WORKFLOW_DEPLOYMENT"),
		Codec: aws.PayloadCodecFromEnv(cfg), // the stack's key: its runs are sealed
	})
	if err := worker.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
