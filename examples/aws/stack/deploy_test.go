package stack_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// A deploy while orders are in flight: the orders deployment 1 started
// finish on deployment 1's code after deployment 2, whose order workflow
// would break them, is live; a new order runs on deployment 2. The example
// API is behind a Function URL here (the examples' ExampleApi=function-url,
// what LocalStack users deploy), behind the HTTP API in the end-to-end
// test, so that CI deploys both.
func TestDeployKeepsRunsOnTheirDeployment(t *testing.T) {
	// Two builds and deploys: about a minute with a warm Go build cache,
	// several on a loaded machine.
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	stack := deployExamples(t, ctx, "wf-deploy-", behindFunctionURL)
	out := stack.Outputs
	if !strings.Contains(out["ApiUrl"], "lambda-url") {
		t.Fatalf("ApiUrl %q is no Function URL", out["ApiUrl"])
	}
	api := &apiClient{base: out["ApiUrl"], token: out["ApiToken"]}
	versions := awslambda.NewFromConfig(emulator.Config())
	flow := out["FlowFunctionName"]
	w, err := awsworld.New(emulator.Config(), awsworld.Options{Table: out["TableName"], QueueURL: out["QueueUrl"], Bucket: out["BucketName"]})
	if err != nil {
		t.Fatal(err)
	}
	runs := workflow.NewClient(w)
	v1 := liveVersion(t, ctx, versions, flow)

	suffix := strings.ToLower(rand.Text()[:8])
	old := []string{"old1-" + suffix, "old2-" + suffix}
	webhooks := map[string]string{}
	for _, id := range old {
		webhooks[id] = placeOrder(t, ctx, api, id) // priced; waits for the customer
	}
	pinnedTo(t, ctx, runs, v1, old)

	stack.Deploy(t, ctx, awsstack.Examples, "STACK_PARAMETERS="+testParameters, behindFunctionURL, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -overlay="+deployment2(t, stack.Root)))
	logs := stack.Logs
	v2 := liveVersion(t, ctx, versions, flow)
	if v2 == v1 {
		t.Fatalf("the alias stayed on version %s after a code change", v1)
	}
	t.Logf("deployed versions %s and %s in %v", v1, v2, time.Since(start).Round(time.Millisecond))
	// The gate, built from deployment 2's code, found that code breaks the
	// old orders, and let the deploy go on since they stay on version 1.
	for _, id := range old {
		if keep := "KEEP deployment " + v1 + ": " + lambdaapp.RunID(id) + " "; !strings.Contains(logs, keep) {
			t.Errorf("the deploy gate did not report %q:\n%s", keep, logs)
		}
	}
	if _, err := versions.GetFunction(ctx, &awslambda.GetFunctionInput{FunctionName: &flow, Qualifier: &v1}); err != nil {
		t.Fatalf("version %s, which runs are pinned to, is gone after the deploy: %v", v1, err)
	}

	// The queue feeds the alias: a new order is pinned to version 2 and
	// gets its code's reply.
	fresh := "new-" + suffix
	webhook := placeOrder(t, ctx, api, fresh)
	pinnedTo(t, ctx, runs, v2, []string{fresh})
	if lines := confirmOrder(t, ctx, webhook, "Ada"); lines[len(lines)-1] != `{"accepted":true,"next":"awaiting approval on deployment 2"}` {
		t.Fatalf("new order's webhook reply %q, want deployment 2's", lines)
	}

	// Each old order's confirm and decide steps run now, on version 1's
	// code: the alias's version 2 hands their messages over to version 1.
	for _, id := range old {
		if lines := confirmOrder(t, ctx, webhooks[id], "Ada"); lines[len(lines)-1] != `{"accepted":true,"next":"awaiting approval"}` {
			t.Fatalf("order %s's webhook reply %q, want deployment 1's", id, lines)
		}
	}
	for _, id := range append(old, fresh) {
		want := lambdaapp.Receipt{OrderID: id, Status: "approved", TotalCents: orderCents, PricedBy: flow, ConfirmedBy: "Ada", ApprovedBy: "Grace"}
		if r := approveOrder(t, ctx, api, id, "Grace"); r != want {
			t.Fatalf("receipt %+v, want %+v", r, want)
		}
		if st := awaitCompletion(t, ctx, api, id); st.Receipt == nil || *st.Receipt != want {
			t.Fatalf("run of order %s ended with %+v, want %+v", id, st.Receipt, want)
		}
	}
	// What an operator checks before deleting version 1.
	if page, err := runs.ListRuns(ctx, workflow.RunFilter{Deployment: v1, Status: workflow.StatusRunning}); err != nil || len(page.Runs) != 0 {
		t.Fatalf("runs still running on version %s: %+v, %v; want none", v1, page.Runs, err)
	}
	t.Logf("deploy story in %v", time.Since(start).Round(time.Millisecond))
}

// behindFunctionURL deploys the example API behind a Function URL.
const behindFunctionURL = "EXAMPLE_API=function-url"

// deployment2 writes a changed order workflow in place of
// examples/lambdaapp/order.go and returns the build overlay (go help
// build, -overlay) that builds with it. Its workflow prices each order
// twice, so it cannot replay the log of an order deployment 1 priced once,
// and its confirm step names deployment 2 in its reply.
func deployment2(t *testing.T, root string) string {
	src := filepath.Join(root, "examples", "lambdaapp", "order.go")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	changed := string(code)
	for from, to := range map[string]string{
		"\treceipt := Receipt{":      "\tif p, err = price.Call(ctx, o); err != nil {\n\t\treturn Receipt{}, err\n\t}\n\treceipt := Receipt{",
		`return "awaiting approval"`: `return "awaiting approval on deployment 2"`,
	} {
		if strings.Count(changed, from) != 1 {
			t.Fatalf("%s no longer holds %q once: make deployment2 change it anew", src, from)
		}
		changed = strings.Replace(changed, from, to, 1)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "order.go")
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {src: file}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(path, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// liveVersion is the version the flow function's alias "live", which the
// queue feeds, points to.
func liveVersion(t *testing.T, ctx context.Context, versions *awslambda.Client, function string) string {
	t.Helper()
	alias, err := versions.GetAlias(ctx, &awslambda.GetAliasInput{FunctionName: &function, Name: aws.String("live")})
	if err != nil {
		t.Fatalf("alias live of %s: %v", function, err)
	}
	return aws.ToString(alias.FunctionVersion)
}

// pinnedTo checks that the runs of orders are pinned to deployment, as a
// listing by deployment shows them.
func pinnedTo(t *testing.T, ctx context.Context, runs *workflow.Client, deployment string, orders []string) {
	t.Helper()
	page, err := runs.ListRuns(ctx, workflow.RunFilter{Deployment: deployment})
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, r := range page.Runs {
		got = append(got, r.ID)
	}
	for _, id := range orders {
		want = append(want, lambdaapp.RunID(id))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("runs pinned to deployment %s: %v, want %v", deployment, got, want)
	}
}
