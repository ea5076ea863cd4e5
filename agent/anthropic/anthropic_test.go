package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/agenttest/modeltest"
	"github.com/lambdaworkflow/workflow/agent/anthropic"
)

// newModel is the adapter over a real anthropic-sdk-go client that sends
// to baseURL.
func newModel(baseURL string) *anthropic.Model {
	return anthropic.New(sdk.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("sk-ant-test")), "claude-sonnet-4-5")
}

// failure is an error answer as Anthropic sends it.
func failure(status int, typ, message string, header map[string]string) fakeprovider.Reply {
	h := map[string]string{"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"}
	for k, v := range header {
		h[k] = v
	}
	return fakeprovider.Reply{Status: status, Header: h, Body: errorBody(typ, message)}
}

func errorBody(typ, message string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + message + `"}}`
}

// midStream is an answer that starts and then sends an error event.
func midStream(typ string) fakeprovider.Reply {
	r := fakeprovider.MustLoad("testdata/text.sse")
	r.Events = append(r.Events[:4:4], fakeprovider.Event{Type: "error", Data: errorBody(typ, "the stream failed")})
	return r
}

func TestProvider(t *testing.T) {
	modeltest.Run(t, modeltest.Provider{
		Encoding:      fakeprovider.SSE,
		New:           func(url string) agent.Model { return newModel(url) },
		Text:          fakeprovider.MustLoad("testdata/text.sse"),
		TextUsage:     agent.Usage{InputTokens: 600, OutputTokens: 12, CachedInputTokens: 128},
		ToolCalls:     fakeprovider.MustLoad("testdata/tool_calls.sse"),
		ToolUsage:     agent.Usage{InputTokens: 412, OutputTokens: 94},
		Throttle:      failure(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit.", map[string]string{"retry-after": "15"}),
		ThrottleDelay: 15 * time.Second,
		Errors: []modeltest.ErrorCase{
			{Name: "overloaded", Reply: failure(529, "overloaded_error", "Overloaded", nil), Retry: true},
			{Name: "api error", Reply: failure(500, "api_error", "Internal server error", nil), Retry: true},
			{Name: "bad request", Reply: failure(400, "invalid_request_error", "messages: roles must alternate", nil), Retry: false},
			{Name: "bad key", Reply: failure(401, "authentication_error", "invalid x-api-key", nil), Retry: false},
			{Name: "overloaded mid-stream", Reply: midStream("overloaded_error"), Retry: true},
			{Name: "invalid mid-stream", Reply: midStream("invalid_request_error"), Retry: false},
		},
	})
}

// TestRequestIsAMessagesCall checks what the adapter sends: the system
// prompt apart, tool_use blocks with their input, tool_result blocks
// (is_error for a failure), tools with their input schemas, settings,
// and max_tokens by default.
func TestRequestIsAMessagesCall(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.SSE, fakeprovider.MustLoad("testdata/text.sse"), fakeprovider.MustLoad("testdata/text.sse"))
	req := modeltest.Conversation()
	resp, err := agent.Collect(newModel(srv.URL).Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if md := resp.ProviderMetadata; md["id"] != "msg_01XFDUDYJgAACzvnptvVoYEL" || md["model"] != "claude-sonnet-4-5-20250929" {
		t.Errorf("metadata %v", md)
	}
	unbounded := modeltest.Conversation()
	unbounded.Settings.MaxTokens = 0
	if _, err := agent.Collect(newModel(srv.URL).Stream(t.Context(), unbounded)); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if got.Path != "/v1/messages" || got.Header.Get("X-Api-Key") != "sk-ant-test" {
		t.Errorf("path %s, key %q", got.Path, got.Header.Get("X-Api-Key"))
	}
	var body struct {
		Model     string
		MaxTokens int `json:"max_tokens"`
		Stream    bool
		System    []struct{ Text string }
		Messages  []struct {
			Role    string
			Content []struct {
				Type, Text, ID, Name string
				Input                map[string]any
				ToolUseID            string `json:"tool_use_id"`
				IsError              bool   `json:"is_error"`
				Content              any
			}
		}
		Tools []struct {
			Name        string
			InputSchema map[string]any `json:"input_schema"`
		}
		Temperature   float64
		StopSequences []string `json:"stop_sequences"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatalf("%v: %s", err, got.Body)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if body.Model != "claude-sonnet-4-5" || body.MaxTokens != 100 || !body.Stream || body.System[0].Text != "Be brief." || strings.Join(roles, ",") != "user,assistant,user,user" {
		t.Fatalf("request %s", got.Body)
	}
	use, result := body.Messages[1].Content[1], body.Messages[2].Content[0]
	if use.Type != "tool_use" || use.ID != "call_1" || use.Input["city"] != "Paris" || result.Type != "tool_result" || result.ToolUseID != "call_1" || !result.IsError {
		t.Errorf("tool use %+v, result %+v", use, result)
	}
	schema := body.Tools[0].InputSchema
	if body.Tools[0].Name != "weather" || schema["type"] != "object" || schema["properties"] == nil || schema["required"] == nil {
		t.Errorf("tool %s", got.Body)
	}
	if body.Temperature != 0.2 || body.StopSequences[0] != "END" {
		t.Errorf("settings %s", got.Body)
	}
	var second struct {
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &second); err != nil || second.MaxTokens != anthropic.DefaultMaxTokens {
		t.Errorf("without a bound, max_tokens %d, want %d", second.MaxTokens, anthropic.DefaultMaxTokens)
	}
}
