// Package lambdaapp is the example application the examples' Lambda
// functions serve (examples/aws/flow runs its workflows, examples/aws/api
// is its API) and that examples/devserver serves on localhost.
//
// An order goes through three stages:
//
//  1. a step prices it (in the flow function, on AWS);
//  2. the customer confirms the price by calling the order's webhook, a
//     public URL published as the run's "webhook" attribute; a step
//     answers the call with a streamed reply;
//  3. a manager approves it through the API (api.go), which resumes the
//     order's responding hook; a step answers with a receipt.
package lambdaapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/lambdaworkflow/workflow"
)

// Order is the workflow's input.
type Order struct {
	ID    string `json:"id"`
	Items []Item `json:"items"`
}

// Item is one line of an order.
type Item struct {
	SKU       string `json:"sku"`
	Quantity  int    `json:"quantity"`
	UnitCents int    `json:"unitCents"`
}

// Price is what the pricing step computed.
type Price struct {
	TotalCents int `json:"totalCents"`
	// PricedBy names the Lambda function that ran the step (empty outside
	// Lambda), so a caller can see where steps run.
	PricedBy string `json:"pricedBy,omitempty"`
}

// Confirmation is the body a customer posts to the order's webhook.
type Confirmation struct {
	Accept bool   `json:"accept"`
	Name   string `json:"name"`
}

// Approval is what a manager sends through the API.
type Approval struct {
	Approve  bool   `json:"approve"`
	Approver string `json:"approver"`
}

// Receipt answers an approval, and is the run's result.
type Receipt struct {
	OrderID     string `json:"orderId"`
	Status      string `json:"status"` // "approved", "rejected" or "declined" (by the customer)
	TotalCents  int    `json:"totalCents"`
	PricedBy    string `json:"pricedBy,omitempty"`
	ConfirmedBy string `json:"confirmedBy,omitempty"`
	ApprovedBy  string `json:"approvedBy,omitempty"`
}

// Approvals is the responding hook a manager resumes: the workflow and the
// API share its types through this definition.
var Approvals = workflow.DefineRespondingHook[Approval, Receipt]()

// ApprovalToken is the token of an order's approval hook. It is
// deterministic, so the API finds the hook from the order ID alone; the
// API's authentication protects it, not secrecy.
func ApprovalToken(orderID string) string { return "approval:" + orderID }

// WebhookAttribute is the run attribute that holds the order's webhook URL.
const WebhookAttribute = "webhook"

var price = workflow.DefineStep("lambdaapp.price", func(ctx context.Context, o Order) (Price, error) {
	if len(o.Items) == 0 {
		return Price{}, workflow.Fatal(errors.New("an order needs at least one item"))
	}
	p := Price{PricedBy: os.Getenv("AWS_LAMBDA_FUNCTION_NAME")}
	for _, it := range o.Items {
		p.TotalCents += it.Quantity * it.UnitCents
	}
	return p, nil
})

type confirmInput struct {
	Order   Order                   `json:"order"`
	Price   Price                   `json:"price"`
	Request workflow.WebhookMessage `json:"request"`
}

// confirm answers the customer's call to the webhook. The reply streams
// as NDJSON, one line per stage, as an application would stream progress;
// a body that is not a Confirmation gets a 400, and the workflow waits for
// the next call.
var confirm = workflow.DefineStep("lambdaapp.confirm", func(ctx context.Context, in confirmInput) (*Confirmation, error) {
	var c Confirmation
	if err := json.Unmarshal(in.Request.Data.Body, &c); err != nil || c.Name == "" {
		resp := workflow.WebhookResponse{Status: http.StatusBadRequest, Body: []byte(`{"error":"expected {\"accept\": bool, \"name\": string}"}` + "\n")}
		return nil, in.Request.RespondWith(ctx, resp)
	}
	lines := []any{
		map[string]any{"orderId": in.Order.ID, "totalCents": in.Price.TotalCents, "pricedBy": in.Price.PricedBy},
		map[string]any{"accepted": c.Accept, "next": next(c)},
	}
	body := workflow.NewStream(func(yield func([]byte) bool) error {
		for _, l := range lines {
			b, err := json.Marshal(l)
			if err != nil {
				return err
			}
			if !yield(append(b, '\n')) {
				return nil
			}
		}
		return nil
	})
	header := http.Header{"Content-Type": {"application/x-ndjson"}}
	return &c, in.Request.RespondWith(ctx, workflow.WebhookResponse{Header: header, Stream: body})
})

func next(c Confirmation) string {
	if c.Accept {
		return "awaiting approval"
	}
	return "declined"
}

type decideInput struct {
	Receipt Receipt                                 `json:"receipt"`
	Request workflow.HookMessage[Approval, Receipt] `json:"request"`
}

// decide records the manager's decision and answers with the receipt.
var decide = workflow.DefineStep("lambdaapp.decide", func(ctx context.Context, in decideInput) (Receipt, error) {
	r := in.Receipt
	r.Status, r.ApprovedBy = "rejected", in.Request.Data.Approver
	if in.Request.Data.Approve {
		r.Status = "approved"
	}
	return r, in.Request.Respond(ctx, r)
})

// ProcessOrder is the order workflow.
var ProcessOrder = workflow.Define("lambdaapp.order", func(ctx workflow.Context, o Order) (Receipt, error) {
	p, err := price.Call(ctx, o)
	if err != nil {
		return Receipt{}, err
	}
	receipt := Receipt{OrderID: o.ID, TotalCents: p.TotalCents, PricedBy: p.PricedBy}

	// The approval hook exists from the start, so a manager's early call
	// waits for its answer instead of failing with ErrHookNotFound.
	approval := Approvals.Create(ctx, workflow.WithToken(ApprovalToken(o.ID)))
	defer approval.Dispose(ctx)

	confirmation, err := awaitConfirmation(ctx, o, p)
	if err != nil {
		return Receipt{}, err
	}
	receipt.ConfirmedBy = confirmation.Name
	if !confirmation.Accept {
		receipt.Status = "declined"
		return receipt, nil
	}

	msg, err := approval.Receive(ctx)
	if err != nil {
		return Receipt{}, err
	}
	return decide.Call(ctx, decideInput{Receipt: receipt, Request: msg})
})

// awaitConfirmation publishes a webhook and waits for a valid call to it.
func awaitConfirmation(ctx workflow.Context, o Order, p Price) (Confirmation, error) {
	wh := workflow.CreateWebhook(ctx, workflow.WithManualResponse())
	defer wh.Dispose(ctx)
	if err := workflow.SetAttributes(ctx, map[string]string{WebhookAttribute: wh.URL(ctx), "totalCents": strconv.Itoa(p.TotalCents)}); err != nil {
		return Confirmation{}, err
	}
	for req, err := range wh.All(ctx) {
		if err != nil {
			return Confirmation{}, err
		}
		c, err := confirm.Call(ctx, confirmInput{Order: o, Price: p, Request: req})
		if err != nil {
			return Confirmation{}, err
		}
		if c != nil {
			return *c, nil
		}
	}
	return Confirmation{}, fmt.Errorf("order %s: the webhook closed before the customer confirmed", o.ID)
}
