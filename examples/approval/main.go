// Command approval is a human-in-the-loop approval that answers the
// approver: the approver's call waits for what the workflow did with the
// decision (shipped, with a tracking ID, or rejected) instead of getting a
// 202 and polling.
//
// The workflow waits on a responding hook whose token the approver's route
// can compute ("approval:" + order ID); the route resumes it and gets the
// workflow's reply back on the same call.
//
//	go -C examples run ./approval
//	go -C examples run ./approval -reject
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/internal/exampleapp"
)

// Decision is what the approver sends.
type Decision struct {
	Approved bool   `json:"approved"`
	Approver string `json:"approver"`
}

// Outcome is what the workflow answers.
type Outcome struct {
	Status     string `json:"status"` // "shipped" or "rejected"
	TrackingID string `json:"trackingId,omitempty"`
}

// Approvals is shared by the workflow and the route that resumes it.
var Approvals = workflow.DefineRespondingHook[Decision, Outcome]()

var ship = workflow.DefineStep("approval.ship", func(ctx context.Context, orderID string) (string, error) {
	say("shipping order %s", orderID)
	time.Sleep(200 * time.Millisecond) // the carrier's API
	return "TRK-" + orderID, nil
})

// respond is the step that answers the approver. Respond works only in a
// step: the reply is I/O, done once and retried like any other.
var respond = workflow.DefineStep("approval.respond", func(ctx context.Context, in struct {
	Msg     workflow.HookMessage[Decision, Outcome]
	Outcome Outcome
}) (struct{}, error) {
	return struct{}{}, in.Msg.Respond(ctx, in.Outcome)
})

// Order waits for an approval, acts on it, and tells the approver.
var Order = workflow.Define("approval.order", func(ctx workflow.Context, orderID string) (Outcome, error) {
	hook := Approvals.Create(ctx, workflow.WithToken("approval:"+orderID))
	defer hook.Dispose(ctx)
	msg, err := hook.Receive(ctx) // the run suspends here, at no cost, for as long as it takes
	if err != nil {
		return Outcome{}, err
	}
	outcome := Outcome{Status: "rejected"}
	if msg.Data.Approved {
		tracking, err := ship.Call(ctx, orderID)
		if err != nil {
			return Outcome{}, err
		}
		outcome = Outcome{Status: "shipped", TrackingID: tracking}
	}
	_, err = respond.Call(ctx, struct {
		Msg     workflow.HookMessage[Decision, Outcome]
		Outcome Outcome
	}{msg, outcome})
	return outcome, err
})

var started = time.Now()

func say(format string, args ...any) {
	fmt.Printf("%7.3fs  %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	dir := flag.String("dir", ".workflow-data", "where the embedded World keeps its data")
	reject := flag.Bool("reject", false, "reject the order instead of approving it")
	flag.Parse()

	app := exampleapp.Start(*dir)
	defer app.Close()
	ctx, client := app.Ctx, app.Client

	orderID := fmt.Sprintf("ord-%d", time.Now().UnixNano())
	run, err := workflow.Start(ctx, client, Order, orderID)
	if err != nil {
		log.Fatal(err)
	}
	say("order %s is waiting for approval (run %s)", orderID, run.ID)

	token := "approval:" + orderID
	app.WaitForHook(token)

	// This is what the approver's authenticated route does: resume the
	// hook and return the workflow's answer as the response.
	decision := Decision{Approved: !*reject, Approver: "ann@example.com"}
	say("%s decides: approved=%v", decision.Approver, decision.Approved)
	outcome, err := Approvals.Resume(ctx, client, token, decision, workflow.WithReplyTimeout(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	say("the approver's call returned: %+v", outcome)
	if _, err := run.Result(ctx); err != nil {
		log.Fatal(err)
	}
}
