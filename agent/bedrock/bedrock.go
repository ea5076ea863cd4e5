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
	"errors"
	"iter"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/lambdaworkflow/workflow/agent"
)

// errTruncated is a stream that ended before its message did; the step
// retries it.
var errTruncated = errors.New("bedrock: the ConverseStream response ended before the message did (the connection dropped?)")

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
	return func(yield func(agent.Delta, error) bool) {
		in, err := m.input(req)
		if err != nil {
			yield(agent.Delta{}, err)
			return
		}
		out, err := m.client.ConverseStream(ctx, in, func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} })
		if err != nil {
			yield(agent.Delta{}, classify(err))
			return
		}
		stream := out.GetStream()
		defer stream.Close()
		r := reader{}
		if id, ok := middleware.GetRequestIDMetadata(out.ResultMetadata); ok {
			r.metadata = map[string]any{"requestId": id}
		}
		for event := range stream.Events() {
			for _, d := range r.read(event) {
				if !yield(d, nil) {
					return
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(agent.Delta{}, classify(err))
			return
		}
		if ctx.Err() != nil {
			yield(agent.Delta{}, ctx.Err())
			return
		}
		if r.finishReason == "" {
			// The SDK ends the stream quietly when the connection drops
			// mid-message (it reads an unexpected EOF as the end): without
			// the messageStop event, the answer is cut short.
			yield(agent.Delta{}, errTruncated)
			return
		}
		yield(r.finish(), nil)
	}
}
