package stack_test

import (
	"context"
	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// checkStreamPush proves that the deployed flow function announces its
// run streams' writes: a reader on another World, subscribed through the
// stack's Event API (the flow function's own WORKFLOW_STREAM_EVENTS_API_ID
// and _NAMESPACE), is woken by a push once a session the flow function
// runs writes the message it took; the test asserts on the push and on
// what the reader then reads, not on how soon.
func checkStreamPush(t *testing.T, ctx context.Context, out map[string]string) {
	conf, err := awslambda.NewFromConfig(emulator.Config()).GetFunctionConfiguration(ctx, &awslambda.GetFunctionConfigurationInput{FunctionName: aws.String(out["FlowFunctionName"])})
	if err != nil {
		t.Fatal(err)
	}
	env := conf.Environment.Variables
	if env["WORKFLOW_STREAM_EVENTS_API_ID"] == "" {
		t.Fatalf("the flow function has no WORKFLOW_STREAM_EVENTS_API_ID: its stream writes would not be pushed")
	}
	api := awsworld.EventAPIByID(env["WORKFLOW_STREAM_EVENTS_API_ID"], "us-east-1", env["WORKFLOW_STREAM_EVENTS_NAMESPACE"])
	reader, err := awsworld.New(emulator.Config(), awsworld.Options{Table: out["TableName"], QueueURL: out["QueueUrl"], Bucket: out["BucketName"], StreamEvents: api})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	c := workflow.NewClient(reader)
	run, err := flight.Session.Start(ctx, c, chat.Turn{}) // waits for its first message
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := flight.Session.Send(ctx, c, run.ID, chat.Message{End: true}); err != nil {
			t.Logf("ending session %s: %v", run.ID, err)
		}
	}()
	name := engine.RunStream(run.ID, flight.Assistant.Namespace())
	sub := reader.SubscribeStream(ctx, name)
	defer sub.Close()
	if got := reader.Calls(); got["AppSync.EventConnect"] != 1 || got["AppSync.EventSubscribe"] != 1 {
		t.Fatalf("the reader's subscription made %v, want 1 connection and 1 subscription", got)
	}
	if err := flight.Session.Send(ctx, c, run.ID, chat.Message{Text: "Hello!"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.Moved(0):
	case <-time.After(2 * time.Minute):
		t.Fatalf("no push of session %s's stream: the flow function announced none of its writes", run.ID)
	}
	chunks, _, err := reader.ReadStream(ctx, name, 0)
	if err != nil || len(chunks) == 0 {
		t.Fatalf("after the push the stream holds %d chunks, %v; want the message the session took", len(chunks), err)
	}
}
