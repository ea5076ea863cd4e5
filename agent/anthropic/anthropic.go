// Package anthropic is an [agent.Model] on Anthropic's Messages API,
// through the official anthropic-sdk-go SDK.
//
//	client := sdk.NewClient(option.WithAPIKey(key))
//	model := anthropic.New(client, "claude-sonnet-4-5")
//	assistant := agent.New("travel", model, agent.WithTools(...))
//
// It is a module of its own, so the SDK reaches only the builds of
// programs that import it.
package anthropic

import (
	"context"
	"iter"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/lambdaworkflow/workflow/agent"
)

// DefaultMaxTokens bounds an answer when the agent's Settings do not:
// the Messages API requires a bound.
const DefaultMaxTokens = 4096

// Model calls one Claude model.
type Model struct {
	client sdk.Client
	model  string
}

// New returns a model that calls model through client.
func New(client sdk.Client, model string) *Model { return &Model{client: client, model: model} }

// Stream implements [agent.Model]. The SDK's own retries are off for the
// call: the agent's model call step retries it durably, after the delay
// the API asks for, and tells the stream's readers it started over.
func (m *Model) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	return agent.Relay(func() (agent.EventStream[sdk.MessageStreamEventUnion], error) {
		params, err := m.params(req)
		if err != nil {
			return nil, err
		}
		return m.client.Messages.NewStreaming(ctx, params, option.WithMaxRetries(0)), nil
	}, &reader{}, classify)
}
