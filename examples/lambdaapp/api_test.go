package lambdaapp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world/memory"
)

const bearer = "test-token-0123456789"

type app struct {
	t   *testing.T
	ctx context.Context
	c   *workflow.Client
	api func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	web http.Handler
}

func newApp(t *testing.T) *app {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	w := memory.New()
	c := workflow.NewClient(w)
	go workflow.NewWorker(w, workflow.WorkerOptions{WebhookBaseURL: "https://hooks.example"}).Run(ctx)
	return &app{t: t, ctx: ctx, c: c, api: API(c, bearer), web: webhook.NewHandler(c)}
}

// request is the event an HTTP API sends for route (e.g. "POST
// /orders/{id}/approval") with the order ID id and the Authorization
// header auth.
func request(route, id, auth, body string) events.APIGatewayV2HTTPRequest {
	method, pattern, _ := strings.Cut(route, " ")
	ev := events.APIGatewayV2HTTPRequest{
		RouteKey:       route,
		RawPath:        strings.Replace(pattern, "{id}", id, 1),
		PathParameters: map[string]string{"id": id},
		Headers:        map[string]string{"authorization": auth},
		Body:           body,
	}
	ev.RequestContext.HTTP.Method = method
	return ev
}

// call sends a request the way API Gateway does, for route with the order
// ID id.
func (a *app) call(route, id, body string) (int, string) {
	a.t.Helper()
	resp, err := a.api(a.ctx, request(route, id, "Bearer "+bearer, body))
	if err != nil {
		a.t.Fatalf("%s: %v", route, err)
	}
	return resp.StatusCode, resp.Body
}

func (a *app) status(id string) orderStatus {
	a.t.Helper()
	code, body := a.call("GET /orders/{id}", id, "")
	var st orderStatus
	if code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		a.t.Fatalf("GET /orders/%s: %d %s", id, code, body)
	}
	return st
}

// webhookOf waits for the order's webhook and returns its path.
func (a *app) webhookOf(id string) string {
	a.t.Helper()
	for {
		if url := a.status(id).Webhook; url != "" {
			path, ok := strings.CutPrefix(url, "https://hooks.example")
			if !ok {
				a.t.Fatalf("webhook URL %q is not on the worker's base URL", url)
			}
			return path
		}
		select {
		case <-a.ctx.Done():
			a.t.Fatal("no webhook")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (a *app) confirm(path, body string) (int, string) {
	rec := httptest.NewRecorder()
	a.web.ServeHTTP(rec, httptest.NewRequestWithContext(a.ctx, "POST", path, strings.NewReader(body)))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

func TestOrderApprovedThroughWebhookAndAPI(t *testing.T) {
	a := newApp(t)
	order := `{"id": "o1", "items": [{"sku": "tea", "quantity": 2, "unitCents": 450}, {"sku": "pot", "quantity": 1, "unitCents": 2000}]}`
	if code, body := a.call("POST /orders", "", order); code != http.StatusAccepted || !strings.Contains(body, `"runId":"order_o1"`) {
		t.Fatalf("POST /orders: %d %s", code, body)
	}
	if code, _ := a.call("POST /orders", "", order); code != http.StatusAccepted {
		t.Fatalf("repeated POST /orders: %d, want 202 (the same run)", code)
	}
	path := a.webhookOf("o1")

	if code, body := a.confirm(path, `{"accept": true}`); code != http.StatusBadRequest {
		t.Fatalf("confirmation without a name: %d %s", code, body)
	}
	code, body := a.confirm(path, `{"accept": true, "name": "Ada"}`)
	want := `{"orderId":"o1","pricedBy":"","totalCents":2900}` + "\n" + `{"accepted":true,"next":"awaiting approval"}` + "\n"
	if code != http.StatusOK || body != want {
		t.Fatalf("confirmation: %d %q, want %q", code, body, want)
	}

	// API Gateway base64-encodes a body sent without a Content-Type.
	approval := base64.StdEncoding.EncodeToString([]byte(`{"approve": true, "approver": "Grace"}`))
	ev := request("POST /orders/{id}/approval", "o1", "Bearer "+bearer, approval)
	ev.IsBase64Encoded = true
	resp, err := a.api(a.ctx, ev)
	wantReceipt := Receipt{OrderID: "o1", Status: "approved", TotalCents: 2900, ConfirmedBy: "Ada", ApprovedBy: "Grace"}
	var got Receipt
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(resp.Body), &got) != nil || got != wantReceipt {
		t.Fatalf("approval: %v %d %s, want %+v", err, resp.StatusCode, resp.Body, wantReceipt)
	}
	run, _ := workflow.GetRun[Receipt](a.ctx, a.c, RunID("o1"))
	if r, err := run.Result(a.ctx); err != nil || r != wantReceipt {
		t.Fatalf("result %+v, %v", r, err)
	}
	if st := a.status("o1"); st.Status != workflow.StatusCompleted || st.Receipt == nil || *st.Receipt != wantReceipt {
		t.Fatalf("status %+v", st)
	}
	if code, _ := a.call("POST /orders/{id}/approval", "o1", `{"approve": true, "approver": "Grace"}`); code != http.StatusNotFound {
		t.Fatalf("approving a finished order: %d, want 404", code)
	}
}

func TestDeclinedOrderTakesNoApproval(t *testing.T) {
	a := newApp(t)
	a.call("POST /orders", "", `{"id": "o2", "items": [{"sku": "tea", "quantity": 1, "unitCents": 450}]}`)
	if code, body := a.confirm(a.webhookOf("o2"), `{"accept": false, "name": "Ada"}`); code != http.StatusOK || !strings.Contains(body, `"declined"`) {
		t.Fatalf("declining: %d %s", code, body)
	}
	run, _ := workflow.GetRun[Receipt](a.ctx, a.c, RunID("o2"))
	if r, err := run.Result(a.ctx); err != nil || r.Status != "declined" {
		t.Fatalf("result %+v, %v", r, err)
	}
}

func TestAPIRefusesBadCalls(t *testing.T) {
	a := newApp(t)
	for _, tc := range []struct {
		name, auth, route, id, body string
		want                        int
	}{
		{"no token", "", "GET /orders/{id}", "o1", "", http.StatusUnauthorized},
		{"wrong token", "Bearer nope", "GET /orders/{id}", "o1", "", http.StatusUnauthorized},
		{"not bearer", bearer, "GET /orders/{id}", "o1", "", http.StatusUnauthorized},
		{"unknown order", "Bearer " + bearer, "GET /orders/{id}", "nope", "", http.StatusNotFound},
		{"bad order id", "Bearer " + bearer, "POST /orders", "", `{"id": "a/b", "items": [{"quantity": 1}]}`, http.StatusBadRequest},
		{"no items", "Bearer " + bearer, "POST /orders", "", `{"id": "o3"}`, http.StatusBadRequest},
		{"bad approval", "Bearer " + bearer, "POST /orders/{id}/approval", "o1", `{"approve": true}`, http.StatusBadRequest},
		{"no such hook", "Bearer " + bearer, "POST /orders/{id}/approval", "o9", `{"approve": true, "approver": "G"}`, http.StatusNotFound},
		{"unknown route", "Bearer " + bearer, "DELETE /orders/{id}", "o1", "", http.StatusNotFound},
		{"unknown path", "Bearer " + bearer, "GET /orders/{id}/approval/more", "o1", "", http.StatusNotFound},
		{"other resource", "Bearer " + bearer, "POST /invoices", "", `{}`, http.StatusNotFound},
	} {
		resp, err := a.api(a.ctx, request(tc.route, tc.id, tc.auth, tc.body))
		if err != nil || resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, %v; want %d", tc.name, resp.StatusCode, resp.Body, err, tc.want)
		}
	}
	if code, _ := API(a.c, "")(a.ctx, request("GET /orders/{id}", "o1", "Bearer ", "")); code.StatusCode != http.StatusUnauthorized {
		t.Errorf("an API without a token let a caller in: %d", code.StatusCode)
	}
}
