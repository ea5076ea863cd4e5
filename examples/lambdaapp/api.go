package lambdaapp

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaworkflow/workflow"
)

// ReplyTimeout bounds how long the approval route waits for the workflow's
// receipt: API Gateway gives up on an integration after 30 s.
const ReplyTimeout = 20 * time.Second

// API returns the order API as a Lambda handler for HTTP requests in
// payload format 2.0, which an API Gateway HTTP API and a Function URL
// send alike (template.yaml's ExampleApi puts it behind either):
//
//	POST /orders                 start an order (body: Order)       → 202 {"runId"}
//	GET  /orders/{id}            the order's status, webhook, receipt
//	POST /orders/{id}/approval   approve or reject (body: Approval) → 200 Receipt
//
// Every call must carry "Authorization: Bearer <bearer>". An empty bearer
// refuses every call rather than letting anyone in. (A real API would
// rather use an API Gateway JWT authorizer; a shared secret keeps the
// example self-contained, and works behind a Function URL too.)
func API(c *workflow.Client, bearer string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if !authorized(req.Headers, bearer) {
			return reply(http.StatusUnauthorized, errorBody("missing or wrong bearer token")), nil
		}
		body := []byte(req.Body)
		if req.IsBase64Encoded {
			// API Gateway encodes bodies it does not take for text, e.g.
			// any body sent without a Content-Type.
			var err error
			if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
				return reply(http.StatusBadRequest, errorBody("body: "+err.Error())), nil
			}
		}
		switch r, id := route(req); r {
		case "POST /orders":
			return startOrder(ctx, c, body), nil
		case "GET /orders/{id}":
			return getOrder(ctx, c, id), nil
		case "POST /orders/{id}/approval":
			return approve(ctx, c, id, body), nil
		}
		return reply(http.StatusNotFound, errorBody("no route "+req.RequestContext.HTTP.Method+" "+req.RawPath)), nil
	}
}

// route names the request's route and its order ID from its method and
// path. The route key would not do: a Function URL's is always
// "$default", and it sends no path parameters.
func route(req events.APIGatewayV2HTTPRequest) (name, id string) {
	method := req.RequestContext.HTTP.Method
	parts := strings.Split(strings.Trim(req.RawPath, "/"), "/")
	if parts[0] != "orders" {
		return "", ""
	}
	if len(parts) > 1 {
		var err error
		if id, err = url.PathUnescape(parts[1]); err != nil {
			return "", ""
		}
	}
	switch {
	case len(parts) == 1 && method == http.MethodPost:
		return "POST /orders", ""
	case len(parts) == 2 && method == http.MethodGet:
		return "GET /orders/{id}", id
	case len(parts) == 3 && parts[2] == "approval" && method == http.MethodPost:
		return "POST /orders/{id}/approval", id
	}
	return "", ""
}

// authorized compares the bearer token in constant time. API Gateway and
// Function URLs pass header names in lower case.
func authorized(headers map[string]string, bearer string) bool {
	got, ok := strings.CutPrefix(headers["authorization"], "Bearer ")
	return ok && bearer != "" && subtle.ConstantTimeCompare([]byte(got), []byte(bearer)) == 1
}

// orderIDs are what an order ID may be: it goes into a run ID and a hook
// token.
var orderIDs = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// RunID is the ID of an order's run: one run per order, so a repeated
// POST /orders returns the run the first one started.
func RunID(orderID string) string { return "order_" + orderID }

func startOrder(ctx context.Context, c *workflow.Client, body []byte) events.APIGatewayV2HTTPResponse {
	var o Order
	if err := json.Unmarshal(body, &o); err != nil || !orderIDs.MatchString(o.ID) || len(o.Items) == 0 {
		return reply(http.StatusBadRequest, errorBody(`expected {"id": "[A-Za-z0-9_-]{1,64}", "items": [{"sku", "quantity", "unitCents"}, ...]}`))
	}
	run, err := workflow.Start(ctx, c, ProcessOrder, o, workflow.WithRunID(RunID(o.ID)))
	if err != nil {
		return internal("start order", err)
	}
	return reply(http.StatusAccepted, map[string]string{"runId": run.ID})
}

// orderStatus is what GET /orders/{id} returns.
type orderStatus struct {
	RunID   string          `json:"runId"`
	Status  workflow.Status `json:"status"`
	Webhook string          `json:"webhook,omitempty"` // where the customer confirms
	Receipt *Receipt        `json:"receipt,omitempty"`
	Error   string          `json:"error,omitempty"`
}

func getOrder(ctx context.Context, c *workflow.Client, id string) events.APIGatewayV2HTTPResponse {
	run, err := workflow.GetRun[Receipt](ctx, c, RunID(id))
	if errors.Is(err, workflow.ErrRunNotFound) {
		return reply(http.StatusNotFound, errorBody("no order "+id))
	}
	if err != nil {
		return internal("get order", err)
	}
	st := orderStatus{RunID: run.ID}
	if st.Status, err = run.Status(ctx); err != nil {
		return internal("get order", err)
	}
	attrs, err := run.Attributes(ctx)
	if err != nil {
		return internal("get order", err)
	}
	st.Webhook = attrs[WebhookAttribute]
	if st.Status.Terminal() {
		r, err := run.Result(ctx) // returns at once: the run has ended
		if err != nil {
			st.Error = err.Error()
		} else {
			st.Receipt = &r
		}
	}
	return reply(http.StatusOK, st)
}

func approve(ctx context.Context, c *workflow.Client, id string, body []byte) events.APIGatewayV2HTTPResponse {
	var a Approval
	if err := json.Unmarshal(body, &a); err != nil || a.Approver == "" {
		return reply(http.StatusBadRequest, errorBody(`expected {"approve": bool, "approver": string}`))
	}
	r, err := Approvals.Resume(ctx, c, ApprovalToken(id), a, workflow.WithReplyTimeout(ReplyTimeout))
	switch {
	case err == nil:
		return reply(http.StatusOK, r)
	case errors.Is(err, workflow.ErrHookNotFound):
		return reply(http.StatusNotFound, errorBody("order "+id+" is not waiting for an approval"))
	case errors.Is(err, workflow.ErrHookResponseNotSent):
		return reply(http.StatusConflict, errorBody("order "+id+" ended without taking the approval (the customer declined?)"))
	case errors.Is(err, context.DeadlineExceeded):
		// The approval is recorded and will be acted on; only its receipt
		// is late.
		return reply(http.StatusAccepted, errorBody("approval recorded; the receipt was not ready in time: GET /orders/"+id))
	}
	return internal("approve order", err)
}

func internal(what string, err error) events.APIGatewayV2HTTPResponse {
	slog.Error("lambdaapp: "+what, "err", err)
	return reply(http.StatusInternalServerError, errorBody(what+" failed"))
}

func errorBody(msg string) map[string]string { return map[string]string{"error": msg} }

func reply(status int, v any) events.APIGatewayV2HTTPResponse {
	b, err := json.Marshal(v)
	if err != nil {
		b = fmt.Appendf(nil, `{"error":%q}`, err.Error())
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json"},
		Body:       string(b) + "\n",
	}
}
