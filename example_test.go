package workflow_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var shout = workflow.DefineStep("example.shout", func(ctx context.Context, s string) (string, error) {
	return strings.ToUpper(s), nil
})

var greeting = workflow.Define("example.greeting", func(ctx workflow.Context, names []string) (string, error) {
	var futures []workflow.Future[string]
	for _, n := range names {
		futures = append(futures, shout.Go(ctx, n)) // in parallel
	}
	loud, err := workflow.Gather(ctx, futures...)
	if err != nil {
		return "", err
	}
	workflow.Sleep(ctx, 10*time.Millisecond)
	return "HELLO " + strings.Join(loud, " AND "), nil
})

// A workflow fans out steps, joins them, sleeps durably and returns.
func Example() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)

	run, err := workflow.Start(ctx, workflow.NewClient(w), greeting, []string{"ada", "grace"})
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Result(ctx))
	// Output: HELLO ADA AND GRACE <nil>
}

var approve = workflow.Define("example.approve", func(ctx workflow.Context, order string) (string, error) {
	h := workflow.CreateHook[bool](ctx, workflow.WithToken("approve:"+order))
	switch workflow.Select(ctx, h, workflow.After(ctx, 24*time.Hour)) {
	case 0:
		ok, err := h.Receive(ctx)
		if err != nil || !ok {
			return "rejected", err
		}
		return "approved", nil
	default:
		return "timed out", nil
	}
})

// A workflow waits for a person, racing a hook against a day-long timer;
// ResumeHook delivers the decision from outside the run.
func ExampleSelect() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	client := workflow.NewClient(w)

	run, _ := workflow.Start(ctx, client, approve, "o-17")
	for workflow.ResumeHook(ctx, client, "approve:o-17", true) != nil {
		time.Sleep(time.Millisecond) // until the run has created its hook
	}
	fmt.Println(run.Result(ctx))
	// Output: approved <nil>
}

var tokens = workflow.DefineStep("example.tokens", func(ctx context.Context, text string) (int, error) {
	out, err := workflow.Writer[string](ctx, "tokens")
	if err != nil {
		return 0, err
	}
	words := strings.Fields(text)
	for _, w := range words {
		if err := out.Write(w); err != nil {
			return 0, err
		}
	}
	return len(words), nil
})

var tokenize = workflow.Define("example.tokenize", func(ctx workflow.Context, text string) (int, error) {
	return tokens.Call(ctx, text)
})

// A worker runs the workflows of the registry it is given; a reader
// follows the run's stream as typed values while a step writes it.
func ExampleReadStream() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	registry := workflow.NewRegistry(tokenize)
	go workflow.NewWorker(w, workflow.WorkerOptions{Registry: registry}).Run(ctx)

	run, err := workflow.Start(ctx, workflow.NewClient(w), tokenize, "durable functions for Go")
	if err != nil {
		panic(err)
	}
	for tok, err := range workflow.ReadStream[string](ctx, run, "tokens", 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println(tok)
	}
	fmt.Println(run.Result(ctx))
	// Output:
	// durable
	// functions
	// for
	// Go
	// 4 <nil>
}
