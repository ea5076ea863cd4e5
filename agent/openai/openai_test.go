package openai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/agenttest/modeltest"
	"github.com/lambdaworkflow/workflow/agent/openai"
)

// newModel is the adapter over a real openai-go client that sends to
// baseURL.
func newModel(baseURL string, opts ...openai.Option) *openai.Model {
	return openai.New(sdk.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("sk-test")), "gpt-4.1-mini", opts...)
}

// failure is an error answer as OpenAI sends it.
func failure(status int, typ, code, message string, header map[string]string) fakeprovider.Reply {
	return fakeprovider.Reply{Status: status, Header: header,
		Body: `{"error":{"message":"` + message + `","type":"` + typ + `","param":null,"code":"` + code + `"}}`}
}

func TestProvider(t *testing.T) {
	text := fakeprovider.MustLoad("testdata/text.sse")
	inband := fakeprovider.Reply{Events: append(text.Events[:2:2], fakeprovider.Event{
		Data: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
	})}
	modeltest.Run(t, modeltest.Provider{
		Encoding:  fakeprovider.SSE,
		New:       func(url string) agent.Model { return newModel(url) },
		Text:      text,
		TextUsage: agent.Usage{InputTokens: 112, OutputTokens: 11, CachedInputTokens: 64},
		ToolCalls: fakeprovider.MustLoad("testdata/tool_calls.sse"),
		ToolUsage: agent.Usage{InputTokens: 86, OutputTokens: 46},
		Throttle: failure(429, "tokens", "rate_limit_exceeded", "Rate limit reached for gpt-4.1-mini on tokens per min (TPM). Please try again in 20s.",
			map[string]string{"Retry-After": "20"}),
		ThrottleDelay: 20 * time.Second,
		Errors: []modeltest.ErrorCase{
			{Name: "server error", Reply: failure(500, "server_error", "", "The server had an error while processing your request.", nil), Retry: true},
			{Name: "overloaded", Reply: failure(503, "server_error", "", "The engine is currently overloaded, please try again later.", map[string]string{"retry-after-ms": "1500"}), Retry: true},
			{Name: "bad request", Reply: failure(400, "invalid_request_error", "", "Invalid schema for function 'weather'.", nil), Retry: false},
			{Name: "bad key", Reply: failure(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.", nil), Retry: false},
			{Name: "unknown model", Reply: failure(404, "invalid_request_error", "model_not_found", "The model `gpt-9` does not exist.", nil), Retry: false},
			{Name: "error mid-stream", Reply: inband, Retry: true},
		},
	})
}

// TestRequestIsAChatCompletion checks what the adapter sends: the system
// prompt first, tool calls with their arguments, one tool message per
// result, function tools with their schemas, usage asked for, settings.
func TestRequestIsAChatCompletion(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.SSE, fakeprovider.MustLoad("testdata/text.sse"), fakeprovider.MustLoad("testdata/text.sse"))
	req := modeltest.Conversation()
	resp, err := agent.Collect(newModel(srv.URL).Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Collect(newModel(srv.URL, openai.LegacyMaxTokens()).Stream(t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	if md := resp.ProviderMetadata; md["id"] != "chatcmpl-CHx3kE0aQ1wZ7mB9vN2pL5tR8yU4s" || md["model"] != "gpt-4.1-mini-2025-04-14" || md["serviceTier"] != "default" {
		t.Errorf("metadata %v", md)
	}
	reqs := srv.Requests()
	if reqs[0].Path != "/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("path %s, auth %q", reqs[0].Path, reqs[0].Header.Get("Authorization"))
	}
	var body struct {
		Model         string
		Stream        bool
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role       string
			Content    any
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		}
		Tools []struct {
			Type     string
			Function struct {
				Name       string
				Parameters map[string]any
			}
		}
		MaxCompletionTokens int `json:"max_completion_tokens"`
		Temperature         float64
		Stop                []string
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatalf("%v: %s", err, reqs[0].Body)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if body.Model != "gpt-4.1-mini" || !body.Stream || !body.StreamOptions.IncludeUsage || strings.Join(roles, ",") != "system,user,assistant,tool,user" {
		t.Fatalf("request %s", reqs[0].Body)
	}
	call, result := body.Messages[2].ToolCalls[0], body.Messages[3]
	if call.ID != "call_1" || call.Function.Name != "weather" || call.Function.Arguments != `{"city":"Paris"}` || result.ToolCallID != "call_1" || !strings.Contains(fmt.Sprint(result.Content), "UNKNOWN_CITY") {
		t.Errorf("call %+v, result %+v", call, result)
	}
	if tool := body.Tools[0]; tool.Type != "function" || tool.Function.Name != "weather" || tool.Function.Parameters["type"] != "object" {
		t.Errorf("tool %+v", tool)
	}
	if body.MaxCompletionTokens != 100 || body.Temperature != 0.2 || body.Stop[0] != "END" {
		t.Errorf("settings %s", reqs[0].Body)
	}
	var legacy map[string]any
	_ = json.Unmarshal(reqs[1].Body, &legacy)
	if _, ok := legacy["max_completion_tokens"]; legacy["max_tokens"] != 100.0 || ok {
		t.Errorf("LegacyMaxTokens sent %s", reqs[1].Body)
	}
}

// TestEndpointWithoutUsageIsWarnedAbout: a compatible server that sends
// no usage chunk still answers, and the response says usage is missing.
func TestEndpointWithoutUsageIsWarnedAbout(t *testing.T) {
	text := fakeprovider.MustLoad("testdata/text.sse")
	text.Events = append(text.Events[:5:5], text.Events[6])
	srv := fakeprovider.Start(t, fakeprovider.SSE, text)
	resp, err := agent.Collect(newModel(srv.URL).Stream(t.Context(), agent.Request{Messages: []agent.Message{agent.UserMessage(modeltest.Prompt)}}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != modeltest.FinalText || len(resp.Warnings) != 1 || resp.Usage != (agent.Usage{}) {
		t.Fatalf("response %+v", resp)
	}
}
