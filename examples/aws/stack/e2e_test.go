// The end-to-end test of the AWS deployment of the examples: template.yaml
// and the examples' template linted with `sam validate --lint`, built with
// `sam build` (which calls the build-* targets of functions/lambda.mk and
// examples/aws/Makefile) and deployed with `sam deploy` to MiniStack's
// CloudFormation by the same script as `make local`, the World's stack
// running the examples' flow function and the examples' stack beside it
// on its outputs; then an order goes through the functions as it would on
// AWS, and the flight agent books a flight over its Function URL
// (flight_test.go). deploy_test.go deploys the stacks twice, with runs in
// flight.
package stack_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack"
)

func TestEndToEndOnEmulator(t *testing.T) {
	// About 40 s with a warm Go build cache; cold, cross-compiling the AWS
	// SDK for the functions takes minutes more.
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	root := awsstack.Root(t)
	for _, tmpl := range []string{"template.yaml", "examples/aws/template.yaml"} {
		lint := exec.CommandContext(ctx, filepath.Join(root, "scripts", "sam.sh"), "validate", "--lint", "--region", "us-east-1", "--template-file", tmpl)
		lint.Dir = root
		if out, err := lint.CombinedOutput(); err != nil {
			t.Fatalf("sam validate --lint %s: %v\n%s", tmpl, err, out)
		}
	}

	bookID := "call-book-" + strings.ToLower(rand.Text()[:8])
	bedrock := startBedrockStandIn(t, bookID)
	stack := deployExamples(t, ctx, "wf-e2e-", "FLIGHT_BEDROCK_ENDPOINT="+bedrock.URL)
	out := stack.Outputs
	t.Logf("built and deployed %s in %v", stack.Name, time.Since(start).Round(time.Millisecond))
	checkDefences(t, ctx, out)
	checkFlowConcurrency(t, ctx, out)
	checkDeadLetterAlarm(t, ctx, out)
	reminder := startLongSleep(t, ctx, out)
	// A visibility timeout the test can wait out: a message the flow
	// function failed to settle comes back after it (see the end).
	setVisibility(t, ctx, out["QueueUrl"], queueVisibility)
	// The API takes the token in the stack's secret, and nothing else.
	for _, wrong := range []string{"", out["ApiToken"][1:]} {
		stranger := &apiClient{base: out["ApiUrl"], token: wrong}
		if status, body := stranger.do(t, ctx, "GET", "/orders/none", nil); status != http.StatusUnauthorized {
			t.Fatalf("GET /orders/none with token %q: %d %s, want 401", wrong, status, body)
		}
	}
	api := &apiClient{base: out["ApiUrl"], token: out["ApiToken"]}

	audit := recordAudit(t, ctx)
	orderID := "e2e-" + strings.ToLower(rand.Text()[:8])
	// The customer's name goes into the run's hook payload and its
	// result: checkSealed looks for it in the stack's storage.
	customer := "Ada-" + rand.Text()[:16]
	webhook := placeOrder(t, ctx, api, orderID)
	if !strings.HasPrefix(webhook, out["WebhookUrl"]) {
		t.Fatalf("webhook URL %q is not under the stack's webhook URL %q", webhook, out["WebhookUrl"])
	}

	// A call the workflow refuses gets a step's 400, and the workflow waits
	// for the next one.
	if status, _, body := post(t, ctx, webhook, `{"accept": "yes"}`); status != http.StatusBadRequest {
		t.Fatalf("webhook with a bad body: %d %q, want 400", status, body)
	}
	if status, _, _ := post(t, ctx, out["WebhookUrl"]+".well-known/workflow/v1/webhook/hk_nosuchtoken", `{}`); status != http.StatusNotFound {
		t.Fatalf("webhook with an unknown token: %d, want 404", status)
	}
	lines := confirmOrder(t, ctx, webhook, customer)
	want := fmt.Sprintf(`{"orderId":%q,"pricedBy":%q,"totalCents":%d}`, orderID, out["FlowFunctionName"], orderCents)
	if len(lines) != 2 || lines[0] != want || lines[1] != `{"accepted":true,"next":"awaiting approval"}` {
		t.Fatalf("webhook reply:\n%s\nwant first line %s (the step ran in the flow function)", strings.Join(lines, "\n"), want)
	}

	receipt := approveOrder(t, ctx, api, orderID, "Grace")
	wantReceipt := lambdaapp.Receipt{OrderID: orderID, Status: "approved", TotalCents: orderCents, PricedBy: out["FlowFunctionName"], ConfirmedBy: customer, ApprovedBy: "Grace"}
	if receipt != wantReceipt {
		t.Fatalf("receipt %+v, want %+v", receipt, wantReceipt)
	}
	if st := awaitCompletion(t, ctx, api, orderID); st.Receipt == nil || *st.Receipt != wantReceipt {
		t.Fatalf("run result %+v, want %+v", st.Receipt, wantReceipt)
	}
	// The run was sealed: one data key, made by the API function that
	// started it, which every other process unwraps once.
	runID := lambdaapp.RunID(orderID)
	checkSealed(t, ctx, out, runID, customer, wantReceipt)
	kmsCalls := audit.calls(t, ctx, runID)
	t.Logf("KMS calls of the order's run: %v", kmsCalls)
	if kmsCalls["GenerateDataKey"] != 1 || kmsCalls["Decrypt"] < 1 {
		t.Errorf("KMS calls of the order's run %v; want one GenerateDataKey, and a Decrypt at least in the flow function", kmsCalls)
	}
	checkFlightAgent(t, ctx, out["FlightUrl"], bedrock, bookID)
	reminder.finish(t, ctx, out["FlowFunctionName"])
	// Every message the flow function took is settled: after one more
	// visibility timeout none is back in the queue (an answer the event
	// source cannot read, such as a null list of failures, leaves the batch
	// undeleted and redelivers it every visibility timeout).
	time.Sleep(queueVisibility + 5*time.Second)
	for name, url := range map[string]string{"queue": out["QueueUrl"], "dead-letter queue": out["DeadLetterQueueUrl"]} {
		if n := queueDepth(t, ctx, url); n != 0 {
			t.Errorf("%s holds %d messages a visibility timeout after the run ended, want none", name, n)
		}
	}
	// Last, since a session of its own may leave a schedule and messages
	// behind: the stack's flow function announces its streams' writes.
	checkStreamPush(t, ctx, out)
	t.Logf("end to end in %v", time.Since(start).Round(time.Millisecond))
}
