package flowtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/webhook"
)

var shout = workflow.DefineStep("flowtest.shout", func(ctx context.Context, m workflow.WebhookMessage) (struct{}, error) {
	return struct{}{}, m.RespondWith(ctx, workflow.WebhookResponse{
		Header: http.Header{"Content-Type": {"text/plain"}},
		Body:   []byte(strings.ToUpper(string(m.Data.Body))),
		Stream: workflow.NewStream(func(yield func([]byte) bool) error {
			yield([]byte("!"))
			return nil
		}),
	})
})

// hooked creates a webhook of each mode, publishes their tokens, and
// answers one call to each.
var hooked = workflow.Define("flowtest.hooked", func(ctx workflow.Context, _ struct{}) (string, error) {
	accepting := workflow.CreateWebhook(ctx)
	manual := workflow.CreateWebhook(ctx, workflow.WithManualResponse())
	if _, err := publish.Call(ctx, []string{accepting.Token(ctx), manual.Token(ctx)}); err != nil {
		return "", err
	}
	a, err := accepting.Receive(ctx)
	if err != nil {
		return "", err
	}
	m, err := manual.Receive(ctx)
	if err != nil {
		return "", err
	}
	_, err = shout.Call(ctx, m)
	return a.Data.Method + " " + string(a.Data.Body), err
})

func webhookRoute(t *testing.T, e *env) {
	srv := webhookServer(t, e)
	run := start(t, e, hooked, struct{}{})
	tokens := publishedTokens(t, e, run, 2)
	post := func(token, body string) (int, string) {
		return postWebhook(t, workflow.WebhookURL(srv.URL, token), body, http.Header{"Content-Type": {"text/plain"}})
	}
	if code, body := post(tokens[0], "ping"); code != http.StatusAccepted || body != "" {
		t.Fatalf("default webhook: %d %q", code, body)
	}
	if code, body := post(tokens[1], "hey"); code != http.StatusOK || body != "HEY!" {
		t.Fatalf("manual webhook: %d %q", code, body)
	}
	if got := result(t, e, run); got != "POST ping" {
		t.Fatalf("the run got %q", got)
	}
	token := unique("echo")
	echoRun := start(t, e, echoing, struct {
		Token string
		N     int
	}{token, 1})
	waitForHook(t, e, token)
	if code, body := post(token, "x"); code != http.StatusNotFound || body != "" {
		t.Fatalf("a responding hook over HTTP: %d %q, want an empty 404", code, body)
	}
	if _, err := echoes.Resume(e.ctx, e.client, token, "done"); err != nil {
		t.Fatal(err)
	}
	result(t, e, echoRun)
}

// webhookServer serves the webhook route on 127.0.0.1 until the test ends.
func webhookServer(t *testing.T, e *env) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle(webhook.Pattern, webhook.NewHandler(e.client))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// publishedTokens reads the n webhook tokens run publishes on its default
// stream.
func publishedTokens[O any](t *testing.T, e *env, run *workflow.Run[O], n int) []string {
	t.Helper()
	var tokens []string
	for chunk, err := range run.Readable(e.ctx, "", 0) {
		if err == nil {
			err = chunk.Decode(&tokens)
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if len(tokens) != n {
		t.Fatalf("the run published %q, want %d tokens", tokens, n)
	}
	return tokens
}

// postWebhook POSTs body with header to url and reads the whole reply.
func postWebhook(t *testing.T, url, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
