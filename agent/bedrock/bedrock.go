// Package bedrock is an [agent.Model] on Amazon Bedrock's Converse API
// (ConverseStream), through the AWS SDK for Go v2: the default model
// provider on AWS, where the Lambda function's role grants it and no API
// key is kept anywhere.
//
//	cfg, _ := config.LoadDefaultConfig(ctx)
//	model := bedrock.New(bedrockruntime.NewFromConfig(cfg), "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
//	assistant := agent.New("travel", model, agent.WithTools(...))
//
// Only programs that import this package link the Bedrock Runtime client.
package bedrock

import (
	"context"
	"iter"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/lambdaworkflow/workflow/agent"
)

// Model calls one Bedrock model (a model ID, an inference profile ID or
// an ARN) with ConverseStream.
type Model struct {
	client  *bedrockruntime.Client
	modelID string
}

// New returns a model that calls modelID through client.
func New(client *bedrockruntime.Client, modelID string) *Model {
	return &Model{client: client, modelID: modelID}
}

// Stream implements [agent.Model]. The SDK's own retries are off for the
// call: the agent's model call step retries it durably, after the delay
// the service asks for, and tells the stream's readers it started over.
func (m *Model) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	r := &reader{}
	return agent.Relay(func() (agent.EventStream[types.ConverseStreamOutput], error) {
		in, err := m.input(req)
		if err != nil {
			return nil, err
		}
		out, err := m.client.ConverseStream(ctx, in, func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }, withReadOnlyBody)
		if err != nil {
			return nil, err
		}
		if id, ok := middleware.GetRequestIDMetadata(out.ResultMetadata); ok {
			r.metadata = map[string]any{"requestId": id}
		}
		return &events{stream: out.GetStream()}, nil
	}, r, classify)
}

// events is the SDK's event channel as an agent.EventStream.
type events struct {
	stream  *bedrockruntime.ConverseStreamEventStream
	current types.ConverseStreamOutput
}

func (e *events) Next() bool {
	var ok bool
	e.current, ok = <-e.stream.Events()
	return ok
}

func (e *events) Current() types.ConverseStreamOutput { return e.current }
func (e *events) Err() error                          { return e.stream.Err() }
func (e *events) Close() error                        { return e.stream.Close() }
