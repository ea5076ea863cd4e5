package dynamic_test

import (
	"context"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/dynamic"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var benchStep = workflow.DefineStep("dyntest.bench.step", func(_ context.Context, i int) (int, error) { return i + 1, nil })

var benchCompiled = workflow.Define("dyntest.bench.compiled", func(ctx workflow.Context, n int) (int, error) {
	v := 0
	for range n {
		var err error
		if v, err = benchStep.Call(ctx, v); err != nil {
			return 0, err
		}
	}
	return v, nil
})

const benchSource = `
def workflow(n):
    v = 0
    for i in range(n):
        v = steps.step(v)
    return v
`

// What the interpreter adds to a run of ten inline steps on the memory
// World: the same loop compiled and as a dynamic source.
func BenchmarkTenSteps(b *testing.B) {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{DynamicWorkflows: true}).Run(ctx)
	c := workflow.NewClient(w)
	b.Run("compiled", func(b *testing.B) {
		for b.Loop() {
			run, err := workflow.Start(ctx, c, benchCompiled, 10)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := run.Result(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamic", func(b *testing.B) {
		for b.Loop() {
			run, err := dynamic.Start[int](ctx, c, benchSource, dynamic.Steps{"step": benchStep}, 10, dynamic.WithEnabled(true))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := run.Result(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
