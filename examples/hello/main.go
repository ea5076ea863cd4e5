// Command hello is the README's example: a workflow with two steps and a
// durable sleep, run on the embedded World.
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/local"
)

// README:begin
var greet = workflow.DefineStep("greet", func(ctx context.Context, name string) (string, error) {
	return "Hello, " + name, nil // steps do the I/O; their results are recorded
})

var welcome = workflow.Define("welcome", func(ctx workflow.Context, name string) (string, error) {
	hello, err := greet.Call(ctx, name)
	if err != nil {
		return "", err
	}
	workflow.Sleep(ctx, 2*time.Second) // durable: survives restarts, costs nothing
	return greet.Call(ctx, hello)
})

func main() {
	w, err := local.Open(".workflow-data") // embedded, durable, no services
	if err != nil {
		log.Fatal(err)
	}
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(context.Background())
	run, _ := workflow.Start(context.Background(), workflow.NewClient(w), welcome, "Go")
	fmt.Println(run.Result(context.Background())) // Hello, Hello, Go <nil>
}

// README:end
