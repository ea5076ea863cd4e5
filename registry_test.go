package workflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var served = workflow.Define("registry.served", func(ctx workflow.Context, n int) (int, error) {
	return double.Call(ctx, n)
})

var elsewhere = workflow.Define("registry.elsewhere", func(ctx workflow.Context, n int) (int, error) {
	return double.Call(ctx, n)
})

// A worker given a registry runs its workflows and leaves the others'
// runs, untouched, for a worker that knows them.
func TestAWorkerRunsTheWorkflowsOfItsRegistry(t *testing.T) {
	w := memory.New()
	c := workflow.NewClient(w)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Registry: workflow.NewRegistry(served)})
	a, err := workflow.Start(ctx, c, served, 21)
	if err != nil {
		t.Fatal(err)
	}
	b, err := workflow.Start(ctx, c, elsewhere, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Result(ctx); err != nil || got != 42 {
		t.Fatalf("the registry's workflow: %d, %v", got, err)
	}
	if err := worker.Process(ctx, b.ID); !errors.Is(err, workflow.ErrUnknownWorkflow) {
		t.Fatalf("a workflow outside the registry: %v, want ErrUnknownWorkflow", err)
	}
	if s, _ := b.Status(ctx); s != workflow.StatusPending {
		t.Fatalf("the run the worker does not serve is %s, want pending", s)
	}
	if err := workflow.NewWorker(w, workflow.WorkerOptions{}).Process(ctx, b.ID); err != nil {
		t.Fatal(err) // the default registry holds every workflow defined
	}
	if got, err := b.Result(ctx); err != nil || got != 2 {
		t.Fatalf("the default registry's run: %d, %v", got, err)
	}
}

func TestARegistryRefusesTwoWorkflowsOfOneName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("two workflows named registry.served in one registry did not panic")
		}
	}()
	workflow.NewRegistry(served, served)
}
