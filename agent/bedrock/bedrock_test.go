package bedrock_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/agenttest/modeltest"
	"github.com/lambdaworkflow/workflow/agent/bedrock"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

const modelID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// newModel is the adapter over a real Bedrock Runtime client that sends
// to endpoint.
func newModel(endpoint string) *bedrock.Model {
	cfg := emulator.Config()
	cfg.BaseEndpoint = aws.String(endpoint)
	return bedrock.New(bedrockruntime.NewFromConfig(cfg), modelID)
}

// failure is an error answer as Bedrock sends it: the exception's name in
// a header, its message in the body.
func failure(status int, code, message string) fakeprovider.Reply {
	return fakeprovider.Reply{
		Status: status,
		Header: map[string]string{"X-Amzn-ErrorType": code + ":http://internal.amazon.com/coral/com.amazon.bedrock/", "X-Amzn-RequestId": "4f0c1b9e-8d0a-4c53-9a8e-3b7e0f5d2c11"},
		Body:   `{"message":"` + message + `"}`,
	}
}

// midStream is an answer that starts and then fails with an exception.
func midStream(code string) fakeprovider.Reply {
	r := fakeprovider.MustLoad("testdata/text.sse")
	r.Events = append(r.Events[:2:2], fakeprovider.Event{Type: code, Data: `{"message":"the stream failed"}`})
	return r
}

func TestProvider(t *testing.T) {
	modeltest.Run(t, modeltest.Provider{
		Encoding:  fakeprovider.EventStream,
		New:       func(url string) agent.Model { return newModel(url) },
		Text:      fakeprovider.MustLoad("testdata/text.sse"),
		TextUsage: agent.Usage{InputTokens: 546, OutputTokens: 12, CachedInputTokens: 64},
		ToolCalls: fakeprovider.MustLoad("testdata/tool_calls.sse"),
		ToolUsage: agent.Usage{InputTokens: 420, OutputTokens: 86},
		// Bedrock asks for no particular delay: the step's backoff waits.
		Throttle: failure(429, "ThrottlingException", "Too many requests, please wait before trying again."),
		Errors: []modeltest.ErrorCase{
			{Name: "unavailable", Reply: failure(503, "ServiceUnavailableException", "The service is unavailable."), Retry: true},
			{Name: "model not ready", Reply: failure(429, "ModelNotReadyException", "The model is not ready."), Retry: true},
			{Name: "validation", Reply: failure(400, "ValidationException", "The provided model identifier is invalid."), Retry: false},
			{Name: "access denied", Reply: failure(403, "AccessDeniedException", "You don't have access to the model."), Retry: false},
			{Name: "throttled mid-stream", Reply: midStream("throttlingException"), Retry: true},
			{Name: "model stream error", Reply: midStream("modelStreamErrorException"), Retry: true},
			{Name: "validation mid-stream", Reply: midStream("validationException"), Retry: false},
		},
	})
}

// TestRequestIsAConverseConversation checks what the adapter sends: the
// roles alternate (tool results and the next user words share a user
// message), tool calls and schemas are JSON objects, settings are the
// inference configuration.
func TestRequestIsAConverseConversation(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.EventStream, fakeprovider.MustLoad("testdata/text.sse"))
	req := modeltest.Conversation()
	if _, err := agent.Collect(newModel(srv.URL).Stream(t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if want := "/model/" + url.PathEscape(modelID) + "/converse-stream"; got.Path != want && got.Path != "/model/"+modelID+"/converse-stream" {
		t.Errorf("path %s, want %s", got.Path, want)
	}
	var body struct {
		System   []struct{ Text string }
		Messages []struct {
			Role    string
			Content []map[string]json.RawMessage
		}
		InferenceConfig struct {
			MaxTokens     int
			Temperature   float64
			StopSequences []string
		}
		ToolConfig struct {
			Tools []struct {
				ToolSpec struct {
					Name        string
					InputSchema struct{ JSON map[string]any }
				}
			}
		}
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatalf("%v: %s", err, got.Body)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user" || len(body.Messages[1].Content) != 2 || len(body.Messages[2].Content) != 2 {
		t.Fatalf("messages %s", got.Body)
	}
	use, result := string(body.Messages[1].Content[1]["toolUse"]), string(body.Messages[2].Content[0]["toolResult"])
	if !strings.Contains(use, `"input":{"city":"Paris"}`) || !strings.Contains(result, "UNKNOWN_CITY") || !strings.Contains(result, `"toolUseId":"call_1"`) {
		t.Errorf("tool use %s, result %s", use, result)
	}
	ic := body.InferenceConfig
	if body.System[0].Text != "Be brief." || ic.MaxTokens != 100 || ic.Temperature < 0.19 || ic.Temperature > 0.21 || ic.StopSequences[0] != "END" {
		t.Errorf("system %+v, inference %+v", body.System, ic)
	}
	tool := body.ToolConfig.Tools[0].ToolSpec
	if tool.Name != "weather" || tool.InputSchema.JSON["type"] != "object" {
		t.Errorf("tool %+v", tool)
	}
}

// TestConverseStreamOnMiniStack runs the adapter against MiniStack's
// Bedrock Runtime, which answers with a mock reply: the SDK's request,
// event stream and metadata, end to end, with a conversation that holds
// a tool call and its result (MiniStack checks the roles alternate and no
// content is empty, as Bedrock does).
func TestConverseStreamOnMiniStack(t *testing.T) {
	cfg := emulator.Require(t)
	model := bedrock.New(bedrockruntime.NewFromConfig(cfg), "amazon.nova-lite-v1:0")
	req := modeltest.Conversation()
	resp, err := agent.Collect(model.Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Message.Text, "[ministack mock") || resp.FinishReason != agent.FinishStop {
		t.Fatalf("response %q, %s", resp.Message.Text, resp.FinishReason)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 || resp.ProviderMetadata["latencyMs"] == nil || len(resp.Warnings) != 0 {
		t.Fatalf("usage %+v, metadata %v, warnings %v", resp.Usage, resp.ProviderMetadata, resp.Warnings)
	}
}

// TestAgentRunsOnMiniStack runs an agent on MiniStack's Bedrock Runtime
// as a workflow: the model call is a recorded step, its answer the run's
// result.
func TestAgentRunsOnMiniStack(t *testing.T) {
	cfg := emulator.Require(t)
	_, res := modeltest.RunAgent(t, workflowtest.New(t), bedrock.New(bedrockruntime.NewFromConfig(cfg), "amazon.nova-lite-v1:0"))
	if !strings.HasPrefix(res.Text, "[ministack mock") || len(res.Responses) != 1 || res.Usage.TotalTokens() == 0 {
		t.Fatalf("result %q after %d responses, usage %+v", res.Text, len(res.Responses), res.Usage)
	}
}
