package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack/iamcheck"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/aws"
)

const bearer = "iam-test-token-0123456789"

// examplesTemplate is the examples' stack, deployed beside template.yaml's.
const examplesTemplate = "examples/aws/template.yaml"

// The API function's grants in the examples' template are exactly what
// its code calls for: its bearer token read from its secret, as at cold
// start, and over its routes, an order started (a large one, whose input
// goes to S3) and started again, its status while it waits and once it
// has ended, an approval whose receipt is read once the workflow has
// closed it, and calls for orders that do not exist. The workflow runs on
// a worker of its own, and the customer confirms through the webhook
// route of another World; only the function's calls are recorded.
func TestGrantsAreWhatTheFunctionCalls(t *testing.T) {
	stack := iamcheck.NewStack(t)
	tmpl := iamcheck.LoadTemplate(t, examplesTemplate)
	secret := stack.SecretAsIn(t, tmpl, "ApiFunction", "API_BEARER_TOKEN_SECRET", bearer)
	stack.PayloadKeyAsIn(t, tmpl, "ApiFunction")
	rec := iamcheck.NewRecorder(stack.Names())
	cfg := stack.Recorded(rec)
	function := stack.World(t, cfg)
	// Event API requests bypass the SDK: a push variable given to this
	// function would need grants the template must show.
	rec.Watch(function)
	other := stack.World(t, stack.Config)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// As at cold start: every call below is refused unless this is bearer.
	token, err := bearerToken(ctx, secretsmanager.NewFromConfig(cfg), secret)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = workflow.NewWorker(other, workflow.WorkerOptions{Registry: lambdaapp.Workflows, Codec: aws.PayloadCodecFromEnv(stack.Config)}).Run(ctx)
	}()
	sealed := workflow.NewClient(other, workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(stack.Config)))
	customer := webhook.NewHandler(sealed)

	// The approval's receipt is read only once the run has ended, its
	// reply closed.
	ended := make(chan struct{})
	// An instance of the function, sealing the runs it starts as main does.
	newAPI := func(w world.World) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return lambdaapp.API(workflow.NewClient(w, workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(cfg))), token)
	}
	api := newAPI(&iamcheck.Interposed{World: function, BeforeRead: func() { <-ended }})
	call := func(route, id, body string) (int, string) {
		t.Helper()
		method, pattern, _ := strings.Cut(route, " ")
		ev := events.APIGatewayV2HTTPRequest{
			RawPath: strings.Replace(pattern, "{id}", id, 1),
			Headers: map[string]string{"authorization": "Bearer " + bearer}, Body: body,
		}
		ev.RequestContext.HTTP.Method = method
		resp, err := api(ctx, ev)
		if err != nil {
			t.Fatalf("%s: %v", route, err)
		}
		return resp.StatusCode, resp.Body
	}
	status := func(id string) (st struct{ Status, Webhook string }) {
		t.Helper()
		if code, body := call("GET /orders/{id}", id, ""); code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("GET /orders/%s: %d %s", id, code, body)
		}
		return st
	}

	// A large order's input goes to S3; the second POST finds the run the
	// first started.
	big := bigOrder("iam-big-" + strings.ToLower(rand.Text()[:10]))
	for range 2 {
		if code, body := call("POST /orders", "", big); code != http.StatusAccepted {
			t.Fatalf("POST /orders: %d %s", code, body)
		}
	}
	id := "iam-" + strings.ToLower(rand.Text()[:10])
	if code, body := call("POST /orders", "", `{"id": "`+id+`", "items": [{"sku": "tea", "quantity": 2, "unitCents": 450}]}`); code != http.StatusAccepted {
		t.Fatalf("POST /orders: %d %s", code, body)
	}
	var hook string
	for hook == "" {
		hook = status(id).Webhook // no base URL: the URL is the path
		if hook == "" {
			select {
			case <-ctx.Done():
				t.Fatal("the order never published its webhook")
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	confirmed := httptest.NewRecorder()
	customer.ServeHTTP(confirmed, httptest.NewRequestWithContext(ctx, "POST", hook, strings.NewReader(`{"accept": true, "name": "Ada"}`)))
	if confirmed.Code != http.StatusOK {
		t.Fatalf("confirming: %d %s", confirmed.Code, confirmed.Body)
	}

	go func() {
		defer close(ended)
		run, err := workflow.GetRun[lambdaapp.Receipt](ctx, sealed, lambdaapp.RunID(id))
		if err == nil {
			_, err = run.Result(ctx)
		}
		if err != nil {
			t.Errorf("the order's run: %v", err)
		}
	}()
	if code, body := call("POST /orders/{id}/approval", id, `{"approve": true, "approver": "Grace"}`); code != http.StatusOK || !strings.Contains(body, `"approved"`) {
		t.Fatalf("approval: %d %s", code, body)
	}
	// Another instance, cold, reads the run: it unwraps the run's data
	// key, which the instance that started it had in its cache.
	api = newAPI(function)
	if st := status(id); st.Status != string(workflow.StatusCompleted) {
		t.Fatalf("the order's status once approved: %s", st.Status)
	}
	if code, _ := call("GET /orders/{id}", "iam-nope", ""); code != http.StatusNotFound {
		t.Fatalf("an unknown order: %d", code)
	}
	if code, _ := call("POST /orders/{id}/approval", "iam-nope", `{"approve": true, "approver": "Grace"}`); code != http.StatusNotFound {
		t.Fatalf("approving an unknown order: %d", code)
	}
	iamcheck.Check(t, tmpl, "ApiFunction", rec)
}

// bigOrder is an order whose input is over the 100 KB a run's item holds
// inline, compressed too.
func bigOrder(id string) string {
	items := make([]string, 3000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"sku": "sku-%04d-%s", "quantity": 1, "unitCents": 100}`, i, iamcheck.Incompressible(64))
	}
	return fmt.Sprintf(`{"id": %q, "items": [%s]}`, id, strings.Join(items, ","))
}
