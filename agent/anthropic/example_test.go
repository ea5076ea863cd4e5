package anthropic_test

import (
	"context"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/agenttest/modeltest"
	"github.com/lambdaworkflow/workflow/agent/anthropic"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// exampleAPI stands in for Anthropic's API in the example; in production
// the client needs only the API key (ANTHROPIC_API_KEY) and no base URL.
var exampleAPI = fakeprovider.New(fakeprovider.SSE)

var travel = agent.New("example.travel",
	anthropic.New(sdk.NewClient(option.WithBaseURL(exampleAPI.URL), option.WithAPIKey("sk-ant-example")), "claude-sonnet-4-5"),
	agent.WithTools(modeltest.Weather))

var askWeather = workflow.Define("example.weather", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
	return travel.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
})

// An agent on Claude inside a workflow: the model calls the weather tool
// for two cities at once, the tools run as steps, and the model answers
// with their results. Each model call is a step, billed once.
func Example() {
	exampleAPI.Script(fakeprovider.MustLoad("testdata/tool_calls.sse"), fakeprovider.MustLoad("testdata/text.sse"))
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)

	run, err := workflow.Start(ctx, workflow.NewClient(w), askWeather, "What is the weather in Paris and Rome?")
	if err != nil {
		panic(err)
	}
	res, err := run.Result(ctx)
	if err != nil {
		panic(err)
	}
	for _, r := range res.Messages[2].ToolResults {
		fmt.Println(r.Name, string(r.Output))
	}
	fmt.Println(res.Text)
	fmt.Println(res.Usage.TotalTokens(), "tokens in", exampleAPI.Billed(), "calls")
	// Output:
	// weather "sunny in Paris"
	// weather "rainy in Rome"
	// It is sunny in Paris and rainy in Rome.
	// 1118 tokens in 2 calls
}
