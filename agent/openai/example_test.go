package openai_test

import (
	"context"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/agenttest/modeltest"
	"github.com/lambdaworkflow/workflow/agent/openai"
)

// A model answers with tool calls, their arguments streamed in pieces;
// agent.Collect assembles them as the agent's model call step does. Here
// a local stand-in for the API replays a recorded answer; WithBaseURL
// points the client at any OpenAI-compatible server the same way.
func ExampleModel_Stream() {
	srv := fakeprovider.New(fakeprovider.SSE, fakeprovider.MustLoad("testdata/tool_calls.sse"))
	defer srv.Close()
	model := openai.New(sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-example")), "gpt-4.1-mini")

	resp, err := agent.Collect(model.Stream(context.Background(), agent.Request{
		Messages: []agent.Message{agent.UserMessage("What is the weather in Paris and Rome?")},
		Tools:    []agent.ToolSpec{modeltest.Weather.Spec()},
	}))
	if err != nil {
		panic(err)
	}
	for _, c := range resp.Message.ToolCalls {
		fmt.Println(c.Name, string(c.Input))
	}
	fmt.Println(resp.FinishReason, resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.ProviderMetadata["model"])
	// Output:
	// weather {"city": "Paris"}
	// weather {"city": "Rome"}
	// tool-calls 86 46 gpt-4.1-mini-2025-04-14
}
