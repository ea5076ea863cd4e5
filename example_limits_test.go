package workflow_test

import (
	"context"
	"fmt"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// report runs one customer's export at a time: a second export of the
// same customer waits in that customer's queue while another customer's
// export runs.
var report = workflow.Define("example.report", func(ctx workflow.Context, customer string) (string, error) {
	return shout.Call(ctx, customer)
}, workflow.WithConcurrency(1))

// Runs beyond a key's limit are queued, at no cost, and start in order as
// the runs ahead of them end.
func ExampleWithConcurrency() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c := workflow.NewClient(w)

	var runs []*workflow.Run[string]
	for _, customer := range []string{"ada", "ada", "bob"} {
		run, err := workflow.Start(ctx, c, report, customer, workflow.WithLimitKey(customer))
		if err != nil {
			panic(err)
		}
		status, _ := run.Status(ctx)
		fmt.Println(customer, status)
		runs = append(runs, run)
	}
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	for _, run := range runs {
		fmt.Println(run.Result(ctx))
	}
	// Output:
	// ada pending
	// ada queued
	// bob pending
	// ADA <nil>
	// ADA <nil>
	// BOB <nil>
}
