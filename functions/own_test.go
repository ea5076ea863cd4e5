package functions_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/dynamic"
	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// The stack as a user deploys it: template.yaml with the stack's default
// flow function (functions/flow), and nothing of the examples. A dynamic
// run started by a client on the World from the stack's outputs, sealed
// with the stack's key, finishes in the flow function.
// TestOwnModuleFromTheDocsBuilds builds a flow function of one's own.
func TestOwnStack(t *testing.T) {
	stack := awsstack.Require(t, "wf-own-")
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	stack.Up(t, ctx, awsstack.World, awsstack.WorldOutputs)
	out := stack.Outputs
	t.Logf("built and deployed %s in %v", stack.Name, time.Since(start).Round(time.Millisecond))
	for _, example := range []string{"ApiUrl", "FlightUrl", "ApiTokenSecret"} {
		if v, ok := out[example]; ok {
			t.Errorf("the stack has an example's output %s=%q", example, v)
		}
	}
	flow := out["FlowFunctionName"]
	if !strings.HasPrefix(flow, stack.Name+"-FlowFunction") {
		t.Fatalf("flow function %q is not named after its stack and logical ID: the checks below would prove nothing", flow)
	}
	lambdas := awslambda.NewFromConfig(emulator.Config())
	// make local gives the stack an Event API: the flow function announces
	// its run streams' writes (world/aws streamevents.go).
	conf, err := lambdas.GetFunctionConfiguration(ctx, &awslambda.GetFunctionConfigurationInput{FunctionName: &flow})
	if err != nil {
		t.Fatal(err)
	}
	if conf.Environment == nil || conf.Environment.Variables["WORKFLOW_STREAM_EVENTS_API_ID"] == "" {
		t.Fatalf("the flow function has no WORKFLOW_STREAM_EVENTS_API_ID: its stream writes would not be pushed")
	}
	var functions []string
	pages := awslambda.NewListFunctionsPaginator(lambdas, &awslambda.ListFunctionsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Functions {
			if name := aws.ToString(f.FunctionName); strings.HasPrefix(name, stack.Name+"-") {
				functions = append(functions, strings.SplitN(strings.TrimPrefix(name, stack.Name+"-"), "-", 2)[0])
			}
		}
	}
	if slices.Sort(functions); !slices.Equal(functions, []string{"FlowFunction", "WebhookFunction"}) {
		t.Errorf("the stack deployed functions %v, want only FlowFunction and WebhookFunction", functions)
	}

	// The webhook function serves its route, reading the World.
	req, err := http.NewRequestWithContext(ctx, "POST", out["WebhookUrl"]+".well-known/workflow/v1/webhook/hk_nosuchtoken", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("webhook with an unknown token: %d %q, want 404", resp.StatusCode, body)
	}

	w, err := awsworld.New(emulator.Config(), awsworld.Options{Table: out["TableName"], QueueURL: out["QueueUrl"], Bucket: out["BucketName"]})
	if err != nil {
		t.Fatal(err)
	}
	// The flow function refuses a dynamic run stored in the clear: the
	// client seals it with the stack's key, as its outputs name it.
	t.Setenv(awsworld.PayloadKeyEnv, out["PayloadKeyArn"])
	client := workflow.NewClient(w, workflow.WithPayloadCodec(awsworld.PayloadCodecFromEnv(emulator.Config())))
	run, err := dynamic.Start[string](ctx, client, `
def workflow(input):
    sleep("1s")
    return "reminded of " + input
`, nil, "tea", dynamic.WithEnabled(true))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := run.Result(ctx); err != nil || got != "reminded of tea" {
		t.Fatalf("run %s: %q, %v", run.ID, got, err)
	}
	// It ran in the flow function: the run is pinned to the version the
	// queue's alias points to.
	alias, err := lambdas.GetAlias(ctx, &awslambda.GetAliasInput{FunctionName: &flow, Name: aws.String("live")})
	if err != nil {
		t.Fatal(err)
	}
	page, err := client.ListRuns(ctx, workflow.RunFilter{Deployment: aws.ToString(alias.FunctionVersion)})
	if err != nil || !slices.ContainsFunc(page.Runs, func(r workflow.RunInfo) bool { return r.ID == run.ID }) {
		t.Fatalf("run %s is not among the runs of the flow function's version %s: %+v, %v", run.ID, aws.ToString(alias.FunctionVersion), page.Runs, err)
	}
	t.Logf("deployed and ran in %v", time.Since(start).Round(time.Millisecond))
}
