package modeltest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
)

// Run runs every test on the adapter p describes.
func Run(t *testing.T, p Provider) {
	t.Run("StreamsText", func(t *testing.T) { testText(t, p) })
	t.Run("StreamsToolCalls", func(t *testing.T) { testToolCalls(t, p) })
	t.Run("ClassifiesErrors", func(t *testing.T) { testErrors(t, p) })
	t.Run("CutStreamIsRetryable", func(t *testing.T) { testCut(t, p) })
	t.Run("DurableRunRetriesAThrottleAndBillsOnce", func(t *testing.T) { testDurable(t, p) })
}

// stream calls the model on a server that answers with reply, and
// returns the deltas up to the first error.
func stream(t *testing.T, p Provider, reply fakeprovider.Reply) ([]agent.Delta, *fakeprovider.Server, error) {
	t.Helper()
	srv := fakeprovider.Start(t, p.Encoding, reply)
	var deltas []agent.Delta
	for d, err := range p.New(srv.URL).Stream(t.Context(), request()) {
		if err != nil {
			return deltas, srv, err
		}
		deltas = append(deltas, d)
	}
	return deltas, srv, nil
}

// collect assembles deltas as the model call step does.
func collect(t *testing.T, deltas []agent.Delta) agent.Response {
	t.Helper()
	resp, err := agent.Collect(func(yield func(agent.Delta, error) bool) {
		for _, d := range deltas {
			if !yield(d, nil) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func testText(t *testing.T, p Provider) {
	deltas, srv, err := stream(t, p, p.Text)
	if err != nil {
		t.Fatal(err)
	}
	resp := collect(t, deltas)
	if resp.Message.Text != FinalText || resp.FinishReason != agent.FinishStop || resp.Usage != p.TextUsage {
		t.Fatalf("response %q, %s, usage %+v; want %q, stop, %+v", resp.Message.Text, resp.FinishReason, resp.Usage, FinalText, p.TextUsage)
	}
	if n := count(deltas, func(d agent.Delta) bool { return d.Text != "" }); n < 2 {
		t.Errorf("the text came in %d delta(s), not streamed", n)
	}
	if len(resp.ProviderMetadata) == 0 {
		t.Error("the response has no provider metadata")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the provider, want 1", n)
	}
}

func testToolCalls(t *testing.T, p Provider) {
	deltas, _, err := stream(t, p, p.ToolCalls)
	if err != nil {
		t.Fatal(err)
	}
	resp := collect(t, deltas)
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || resp.FinishReason != agent.FinishToolCalls || resp.Usage != p.ToolUsage {
		t.Fatalf("%d calls, %s, usage %+v; want 2, tool-calls, %+v", len(calls), resp.FinishReason, resp.Usage, p.ToolUsage)
	}
	for i, city := range []string{"Paris", "Rome"} {
		var in map[string]any
		if err := json.Unmarshal(calls[i].Input, &in); err != nil || !reflect.DeepEqual(in, map[string]any{"city": city}) || calls[i].Name != "weather" || calls[i].ID == "" {
			t.Errorf("call %d: %+v (%s), want weather for %s", i, calls[i], calls[i].Input, city)
		}
	}
	if calls[0].ID == calls[1].ID {
		t.Errorf("both calls have ID %q", calls[0].ID)
	}
	pieces := map[int]int{}
	for _, d := range deltas {
		if d.ToolCall != nil && d.ToolCall.InputDelta != "" {
			pieces[d.ToolCall.Index]++
		}
	}
	for index, n := range pieces {
		if n < 2 {
			t.Errorf("the input of call index %d came in %d piece(s), not streamed", index, n)
		}
	}
}

func testErrors(t *testing.T, p Provider) {
	cases := append([]ErrorCase{{Name: "throttle", Reply: p.Throttle, Retry: true}}, p.Errors...)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			_, srv, err := stream(t, p, c.Reply)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			var fatal *workflow.FatalError
			var retryable *workflow.RetryableError
			switch {
			case c.Retry && !errors.As(err, &retryable):
				t.Errorf("%v: not retryable", err)
			case !c.Retry && !errors.As(err, &fatal):
				t.Errorf("%v: not fatal", err)
			}
			if c.Name == "throttle" && (retryable == nil || retryable.RetryAfter != p.ThrottleDelay) {
				t.Errorf("%v: retry after %+v, want %s", err, retryable, p.ThrottleDelay)
			}
			// The SDK's own retries are off: the step retries, durably.
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests reached the provider, want 1", n)
			}
		})
	}
}

func testCut(t *testing.T, p Provider) {
	cut := fakeprovider.Reply{Events: p.Text.Events[:len(p.Text.Events)/2], Cut: true}
	deltas, srv, err := stream(t, p, cut)
	var fatal *workflow.FatalError
	if err == nil || errors.As(err, &fatal) {
		t.Fatalf("a stream cut short ended with %v, want an error the step retries", err)
	}
	if len(deltas) == 0 {
		t.Error("nothing streamed before the cut")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the provider: the adapter retried by itself", n)
	}
}

func count(deltas []agent.Delta, match func(agent.Delta) bool) int {
	n := 0
	for _, d := range deltas {
		if match(d) {
			n++
		}
	}
	return n
}
