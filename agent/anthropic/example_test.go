package anthropic_test

import (
	"context"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/anthropic"
)

// A model streams its answer as deltas; an agent records the assembled
// response as a step. Here a local stand-in for the API replays a
// recorded answer; in production the client needs only the API key
// (ANTHROPIC_API_KEY).
func ExampleModel_Stream() {
	srv := fakeprovider.New(fakeprovider.SSE, fakeprovider.MustLoad("testdata/text.sse"))
	defer srv.Close()
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-ant-example"))
	model := anthropic.New(client, "claude-sonnet-4-5")

	req := agent.Request{Messages: []agent.Message{agent.UserMessage("What is the weather in Paris and Rome?")}}
	for d, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if d.Text != "" {
			fmt.Printf("%q\n", d.Text)
		}
		if d.FinishReason != "" {
			fmt.Println(d.FinishReason, d.Usage.InputTokens, d.Usage.OutputTokens)
		}
	}
	// Output:
	// "It is sunny"
	// " in Paris and"
	// " rainy in Rome."
	// stop 600 12
}
