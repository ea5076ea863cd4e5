package dynamic_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/dynamic"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var greet = workflow.DefineStep("example.dynamic.greet", func(ctx context.Context, name string) (string, error) {
	return "hello " + name, nil
})

// A run whose orchestration is Starlark source, over a step the binary
// defines: it greets every name in parallel, then waits for an approval.
func ExampleStart() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{DynamicWorkflows: true}).Run(ctx)
	client := workflow.NewClient(w)

	source := `
def workflow(input):
    greetings = join([spawn(steps.greet, n) for n in input["names"]])
    approval = hook(token = "approve:" + input["order"])
    which, answer = first([approval, timer("1d")])
    return {"greetings": greetings, "approved": which == 0 and answer["ok"]}
`
	run, err := dynamic.Start[map[string]any](ctx, client, source,
		dynamic.Steps{"greet": greet},
		map[string]any{"names": []string{"ada", "grace"}, "order": "o-1"},
		dynamic.WithEnabled(true))
	if err != nil {
		panic(err)
	}
	for workflow.ResumeHook(ctx, client, "approve:o-1", map[string]bool{"ok": true}) != nil {
		time.Sleep(time.Millisecond) // until the run has created its hook
	}
	fmt.Println(run.Result(ctx))
	// Output: map[approved:true greetings:[hello ada hello grace]] <nil>
}
