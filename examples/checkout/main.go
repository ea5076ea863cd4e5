// Command checkout runs an order through a durable checkout workflow on the
// embedded World (a SQLite database in .workflow-data): inventory is
// reserved for every item in parallel, the card is charged (the payment
// gateway times out once and the step is retried), the workflow sleeps
// until the warehouse's pick-up, then ships and notifies the customer.
//
// Kill it while it runs and start it again with the same -order: the run
// continues where it was, and no completed step runs twice.
//
//	go -C examples run ./checkout
//	go run ./cmd/workflow inspect run <run ID it prints>
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/local"
)

// Order is the workflow's input.
type Order struct {
	ID       string   `json:"id"`
	Items    []string `json:"items"`
	AmountCt int      `json:"amountCents"`
}

// Receipt is what the payment gateway returns.
type Receipt struct {
	ChargeID string `json:"chargeId"`
	Attempts int    `json:"attempts"`
}

// Result is the workflow's output.
type Result struct {
	Reservations []string `json:"reservations"`
	Receipt      Receipt  `json:"receipt"`
	Tracking     string   `json:"tracking"`
}

var reserve = workflow.DefineStep("checkout.reserve", func(ctx context.Context, item string) (string, error) {
	say("reserving %s", item)
	time.Sleep(30 * time.Millisecond) // the inventory service
	return "rsv-" + item, nil
})

var charge = workflow.DefineStep("checkout.charge", func(ctx context.Context, o Order) (Receipt, error) {
	info, _ := workflow.GetStepInfo(ctx)
	say("charging %d cents for order %s (attempt %d)", o.AmountCt, o.ID, info.Attempt)
	if info.Attempt == 1 {
		// A transient failure the gateway asks us to retry shortly.
		return Receipt{}, workflow.Retryable(errors.New("payment gateway timed out"), 300*time.Millisecond)
	}
	// The step ID is stable across retries: the gateway's idempotency key.
	return Receipt{ChargeID: "ch_" + info.RunID[len(info.RunID)-6:] + "_" + info.StepID, Attempts: info.Attempt}, nil
}, workflow.WithMaxRetries(5))

var ship = workflow.DefineStep("checkout.ship", func(ctx context.Context, o Order) (string, error) {
	say("handing order %s to the carrier", o.ID)
	return "TRK-" + o.ID, nil
})

var notify = workflow.DefineStep("checkout.notify", func(ctx context.Context, tracking string) (struct{}, error) {
	say("emailing the customer: your parcel is on its way (%s)", tracking)
	return struct{}{}, nil
})

// Checkout is the workflow: deterministic orchestration of the steps.
var Checkout = workflow.Define("checkout", func(ctx workflow.Context, o Order) (Result, error) {
	var reservations []workflow.Future[string]
	for _, item := range o.Items {
		reservations = append(reservations, reserve.Go(ctx, item)) // fan-out
	}
	reserved, err := workflow.Gather(ctx, reservations...) // join
	if err != nil {
		return Result{}, err
	}
	receipt, err := charge.Call(ctx, o)
	if err != nil {
		return Result{}, err
	}
	workflow.Sleep(ctx, 2*time.Second) // until the warehouse's pick-up; could be days
	tracking, err := ship.Call(ctx, o)
	if err != nil {
		return Result{}, err
	}
	if _, err := notify.Call(ctx, tracking); err != nil {
		return Result{}, err
	}
	return Result{Reservations: reserved, Receipt: receipt, Tracking: tracking}, nil
})

var started = time.Now()

func say(format string, args ...any) {
	fmt.Printf("%7.3fs  %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	dir := flag.String("dir", ".workflow-data", "where the embedded World keeps its data")
	orderID := flag.String("order", fmt.Sprintf("ord-%d", time.Now().Unix()), "order ID; reuse one to resume its run")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	w, err := local.Open(*dir)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	// The worker stops, and lets its steps finish, before the World closes.
	serving, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- workflow.NewWorker(w, workflow.WorkerOptions{}).Run(serving) }()
	defer func() { stopServing(); <-served }()

	client := workflow.NewClient(w)
	order := Order{ID: *orderID, Items: []string{"keyboard", "mouse", "monitor"}, AmountCt: 45900}
	// The order ID is the idempotency key: starting again resumes the same run.
	run, err := workflow.Start(ctx, client, Checkout, order, workflow.WithIdempotencyKey(order.ID))
	if err != nil {
		log.Fatal(err)
	}
	say("run %s started for order %s", run.ID, order.ID)
	result, err := run.Result(ctx)
	if err != nil {
		log.Fatal(err)
	}
	say("done: %+v", result)
	fmt.Printf("\nInspect it: go run ./cmd/workflow inspect run %s\n", run.ID)
}
