// Package openai is an [agent.Model] on the Chat Completions API of OpenAI
// and of the servers that speak it (vLLM, Ollama, LiteLLM, Azure OpenAI,
// ...), through the official openai-go SDK.
//
//	client := sdk.NewClient(option.WithAPIKey(key)) // or option.WithBaseURL for another server
//	model := openai.New(client, "gpt-4.1-mini")
//	assistant := agent.New("travel", model, agent.WithTools(...))
//
// It is a module of its own, so the SDK reaches only the builds of
// programs that import it.
package openai

import (
	"context"
	"iter"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/lambdaworkflow/workflow/agent"
)

// Model calls one chat model.
type Model struct {
	client    sdk.Client
	model     string
	maxTokens bool
}

// Option configures a Model.
type Option func(*Model)

// LegacyMaxTokens sends Settings.MaxTokens as max_tokens, for servers
// that do not know OpenAI's max_completion_tokens.
func LegacyMaxTokens() Option { return func(m *Model) { m.maxTokens = true } }

// New returns a model that calls model through client.
func New(client sdk.Client, model string, opts ...Option) *Model {
	m := &Model{client: client, model: model}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Stream implements [agent.Model]. The SDK's own retries are off for the
// call: the agent's model call step retries it durably, after the delay
// the server asks for, and tells the stream's readers it started over.
func (m *Model) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	return agent.Relay(func() (agent.EventStream[sdk.ChatCompletionChunk], error) {
		params, err := m.params(req)
		if err != nil {
			return nil, err
		}
		return m.client.Chat.Completions.NewStreaming(ctx, params, option.WithMaxRetries(0)), nil
	}, &reader{}, classify)
}
