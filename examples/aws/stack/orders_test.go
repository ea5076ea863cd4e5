package stack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
)

// The steps of an order (examples/lambdaapp) through a deployed stack.

// orderStatus is the API's answer to GET /orders/{id}.
type orderStatus struct {
	Status  string             `json:"status"`
	Webhook string             `json:"webhook"`
	Receipt *lambdaapp.Receipt `json:"receipt"`
}

// orderCents is what placeOrder's order costs.
const orderCents = 1350

// placeOrder starts an order of three teas through the API and waits for
// the flow function to price it in a step and publish its webhook, whose
// URL it returns (the run's attribute).
func placeOrder(t *testing.T, ctx context.Context, api *apiClient, orderID string) string {
	t.Helper()
	order := lambdaapp.Order{ID: orderID, Items: []lambdaapp.Item{{SKU: "tea", Quantity: 3, UnitCents: 450}}}
	if status, body := api.do(t, ctx, "POST", "/orders", order); status != http.StatusAccepted {
		t.Fatalf("POST /orders: %d %s", status, body)
	}
	var st orderStatus
	waitFor(t, ctx, "the webhook of order "+orderID, func() bool {
		api.get(t, ctx, "/orders/"+orderID, &st)
		return st.Webhook != ""
	})
	return st.Webhook
}

// confirmOrder accepts the order's price at its webhook as the customer
// name, and returns the lines of the reply the confirm step streamed.
func confirmOrder(t *testing.T, ctx context.Context, webhook, name string) []string {
	t.Helper()
	status, header, body := post(t, ctx, webhook, `{"accept": true, "name": "`+name+`"}`)
	if status != http.StatusOK || header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("webhook %s: %d %s %q", webhook, status, header.Get("Content-Type"), body)
	}
	return strings.Split(strings.TrimSpace(body), "\n")
}

// approveOrder approves the order through the API and returns the receipt
// the decide step answered with.
func approveOrder(t *testing.T, ctx context.Context, api *apiClient, orderID, approver string) lambdaapp.Receipt {
	t.Helper()
	var receipt lambdaapp.Receipt
	if status, body := api.do(t, ctx, "POST", "/orders/"+orderID+"/approval", lambdaapp.Approval{Approve: true, Approver: approver}); status != http.StatusOK {
		t.Fatalf("approval of %s: %d %s", orderID, status, body)
	} else if err := json.Unmarshal(body, &receipt); err != nil {
		t.Fatalf("approval reply %s: %v", body, err)
	}
	return receipt
}

// awaitCompletion waits for the order's run to complete.
func awaitCompletion(t *testing.T, ctx context.Context, api *apiClient, orderID string) orderStatus {
	t.Helper()
	var st orderStatus
	waitFor(t, ctx, "the run of order "+orderID+" to complete", func() bool {
		api.get(t, ctx, "/orders/"+orderID, &st)
		return st.Status == "completed"
	})
	return st
}
