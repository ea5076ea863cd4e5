package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// flakyAttempts counts the attempts of flakyQuote, which fails its first
// two.
var flakyAttempts int

// flakyQuote waits 20 ms, then up to 40 ms, before its retries: each delay
// drawn in its second half (HalfJitter) and recorded with the failure.
var flakyQuote = workflow.DefineStep("example.flakyQuote", func(ctx context.Context, item string) (string, error) {
	if flakyAttempts++; flakyAttempts < 3 {
		return "", errors.New("quote service unavailable")
	}
	return item + ": 42 EUR", nil
}, workflow.WithMaxRetries(5), workflow.WithBackoff(workflow.ExponentialBackoff(20*time.Millisecond, time.Second, 2, workflow.HalfJitter)))

var quoteWithRetries = workflow.Define("example.quote", func(ctx workflow.Context, item string) (string, error) {
	return flakyQuote.Call(ctx, item)
})

// A step's retries wait as its backoff says; the jitter spreads the
// retries of steps that failed together.
func ExampleExponentialBackoff() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	run, err := workflow.Start(ctx, workflow.NewClient(w), quoteWithRetries, "lamp")
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Result(ctx))
	fmt.Println("attempts:", flakyAttempts)
	// Output:
	// lamp: 42 EUR <nil>
	// attempts: 3
}
