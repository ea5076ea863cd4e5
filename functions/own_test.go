package functions_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// noExampleAPI deploys a stack without the example API (template.yaml's
// ExampleApi, scripts/local.sh's EXAMPLE_API), as `sam deploy --guided`
// does by default.
const noExampleAPI = "EXAMPLE_API=none"

// A stack for one's own workflows: without the example API it deploys the
// World, the flow and the webhook function and nothing of the API, and a
// run started by a client on the World from the stack's outputs finishes
// in the flow function.
func TestStackWithoutTheExampleAPI(t *testing.T) {
	root, stack := newStack(t, "wf-own-")
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	out := deployStack(t, ctx, root, stack, noExampleAPI)
	t.Logf("built and deployed %s in %v", stack, time.Since(start).Round(time.Millisecond))
	if api, ok := out["ApiUrl"]; ok {
		t.Errorf("the stack has an ApiUrl output %q without the example API", api)
	}
	flow := out["FlowFunctionName"]
	if !strings.HasPrefix(flow, stack+"-FlowFunction") {
		t.Fatalf("flow function %q is not named after its stack and logical ID: the check below would prove nothing", flow)
	}
	// make local gives the stack an Event API: the flow function announces
	// its run streams' writes (world/aws streamevents.go).
	conf, err := awslambda.NewFromConfig(emulator.Config()).GetFunctionConfiguration(ctx, &awslambda.GetFunctionConfigurationInput{FunctionName: &flow})
	if err != nil {
		t.Fatal(err)
	}
	if conf.Environment == nil || conf.Environment.Variables["WORKFLOW_STREAM_EVENTS_API_ID"] == "" {
		t.Fatalf("the flow function has no WORKFLOW_STREAM_EVENTS_API_ID: its stream writes would not be pushed")
	}
	functions := awslambda.NewListFunctionsPaginator(awslambda.NewFromConfig(emulator.Config()), &awslambda.ListFunctionsInput{})
	for functions.HasMorePages() {
		page, err := functions.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Functions {
			if name := aws.ToString(f.FunctionName); strings.HasPrefix(name, stack+"-ApiFunction") {
				t.Errorf("the stack deployed the example API's function %s", name)
			}
		}
	}

	// The webhook function serves its route, reading the World.
	if status, _, body := post(t, ctx, out["WebhookUrl"]+".well-known/workflow/v1/webhook/hk_nosuchtoken", `{}`); status != http.StatusNotFound {
		t.Fatalf("webhook with an unknown token: %d %q, want 404", status, body)
	}

	w, err := awsworld.New(emulator.Config(), awsworld.Options{Table: out["TableName"], QueueURL: out["QueueUrl"], Bucket: out["BucketName"]})
	if err != nil {
		t.Fatal(err)
	}
	run, err := workflow.Start(ctx, workflow.NewClient(w), lambdaapp.Reminder, lambdaapp.ReminderRequest{Note: "tea", AfterSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := run.Result(ctx)
	if want := `reminded of "tea" by ` + flow; err != nil || got != want {
		t.Fatalf("run %s: %q, %v; want %q", run.ID, got, err, want)
	}
	checkStreamPush(t, ctx, out, conf.Environment.Variables)
	t.Logf("deployed and ran in %v", time.Since(start).Round(time.Millisecond))
}
