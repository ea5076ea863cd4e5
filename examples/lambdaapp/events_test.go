package lambdaapp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The events the API gets behind either of template.yaml's front doors,
// in the shapes AWS documents: an HTTP API's (a route key per route, path
// parameters; https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html)
// and a Function URL's (route key "$default", no path parameters;
// https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html).
// METHOD, PATH, ROUTE, ID and BODY are filled in per call.
const (
	httpAPIEvent = `{
  "version": "2.0", "routeKey": "ROUTE", "rawPath": "PATH", "rawQueryString": "",
  "headers": {"authorization": "Bearer AUTH", "content-type": "application/json", "host": "abc123.execute-api.us-east-1.amazonaws.com"},
  "requestContext": {"accountId": "123456789012", "apiId": "abc123", "domainName": "abc123.execute-api.us-east-1.amazonaws.com",
    "http": {"method": "METHOD", "path": "PATH", "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1", "userAgent": "curl/8.5.0"},
    "requestId": "r1", "routeKey": "ROUTE", "stage": "$default", "time": "01/Dec/2026:15:00:00 +0000", "timeEpoch": 1796137200000},
  "pathParameters": {"id": "ID"},
  "body": "BODY", "isBase64Encoded": false
}`
	functionURLEvent = `{
  "version": "2.0", "routeKey": "$default", "rawPath": "PATH", "rawQueryString": "",
  "headers": {"authorization": "Bearer AUTH", "content-type": "application/json", "host": "abcdefgh.lambda-url.us-east-1.on.aws"},
  "requestContext": {"accountId": "anonymous", "apiId": "abcdefgh", "domainName": "abcdefgh.lambda-url.us-east-1.on.aws", "domainPrefix": "abcdefgh",
    "http": {"method": "METHOD", "path": "PATH", "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1", "userAgent": "curl/8.5.0"},
    "requestId": "r1", "routeKey": "$default", "stage": "$default", "time": "01/Dec/2026:15:00:00 +0000", "timeEpoch": 1796137200000},
  "pathParameters": null,
  "body": "BODY", "isBase64Encoded": false, "stageVariables": null
}`
)

// event decodes shape, filled in for route with the order ID id, as
// lambda.Start decodes the function's events.
func event(t *testing.T, shape, route, id, body string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	method, pattern, _ := strings.Cut(route, " ")
	quoted, _ := json.Marshal(body)
	filled := strings.NewReplacer(
		"ROUTE", route, "METHOD", method, "PATH", strings.Replace(pattern, "{id}", id, 1),
		"ID", id, "AUTH", bearer, `"BODY"`, string(quoted),
	).Replace(shape)
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal([]byte(filled), &ev); err != nil {
		t.Fatalf("event %s: %v\n%s", route, err, filled)
	}
	return ev
}

// An order goes through the API behind an HTTP API and behind a Function
// URL alike: started, read, approved, and an unknown route refused.
func TestAPIServesHTTPAPIAndFunctionURLEvents(t *testing.T) {
	for name, shape := range map[string]string{"http-api": httpAPIEvent, "function-url": functionURLEvent} {
		t.Run(name, func(t *testing.T) {
			a := newApp(t)
			call := func(route, id, body string, want int) string {
				t.Helper()
				resp, err := a.api(a.ctx, event(t, shape, route, id, body))
				if err != nil || resp.StatusCode != want {
					t.Fatalf("%s (order %q): %d %s, %v; want %d", route, id, resp.StatusCode, resp.Body, err, want)
				}
				return resp.Body
			}
			call("POST /orders", "", `{"id": "o1", "items": [{"sku": "tea", "quantity": 2, "unitCents": 450}]}`, http.StatusAccepted)
			var st orderStatus
			if err := json.Unmarshal([]byte(call("GET /orders/{id}", "o1", "", http.StatusOK)), &st); err != nil || st.RunID != RunID("o1") {
				t.Fatalf("status %+v, %v; want run %s", st, err, RunID("o1"))
			}
			a.confirm(a.webhookOf("o1"), `{"accept": true, "name": "Ada"}`)
			var r Receipt
			if err := json.Unmarshal([]byte(call("POST /orders/{id}/approval", "o1", `{"approve": true, "approver": "Grace"}`, http.StatusOK)), &r); err != nil || r.Status != "approved" {
				t.Fatalf("receipt %+v, %v; want approved", r, err)
			}
			call("GET /orders/{id}", "o2", "", http.StatusNotFound)
			call("DELETE /orders/{id}", "o1", "", http.StatusNotFound)
		})
	}
}
