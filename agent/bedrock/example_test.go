package bedrock_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/bedrock"
)

// A model streams its answer as deltas; an agent records the assembled
// response as a step. Here a local stand-in for Bedrock replays a
// recorded answer: on AWS the client comes from config.LoadDefaultConfig,
// with the function role's credentials and no endpoint.
func ExampleModel_Stream() {
	srv := fakeprovider.New(fakeprovider.EventStream, fakeprovider.MustLoad("testdata/text.sse"))
	defer srv.Close()
	cfg := aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	}
	model := bedrock.New(bedrockruntime.NewFromConfig(cfg), "us.anthropic.claude-sonnet-4-5-20250929-v1:0")

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
	// stop 546 12
}
