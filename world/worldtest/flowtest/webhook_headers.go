package flowtest

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"

	"github.com/lambdaworkflow/workflow"
)

// headersSeen creates a webhook that records the default headers and one
// that records only Authorization and X-Signature, publishes their tokens,
// and returns the headers each request arrived with.
var headersSeen = workflow.Define("flowtest.headersSeen", func(ctx workflow.Context, _ struct{}) ([2]http.Header, error) {
	byDefault := workflow.CreateWebhook(ctx)
	allowing := workflow.CreateWebhook(ctx, workflow.WithRequestHeaders("authorization", "X-Signature"))
	if _, err := publish.Call(ctx, []string{byDefault.Token(ctx), allowing.Token(ctx)}); err != nil {
		return [2]http.Header{}, err
	}
	var seen [2]http.Header
	for i, wh := range []*workflow.Webhook{byDefault, allowing} {
		m, err := wh.Receive(ctx)
		if err != nil {
			return seen, err
		}
		seen[i] = m.Data.Header
	}
	return seen, nil
})

// webhookRecordsAllowedHeaders checks that a request's headers reach the
// run's log only if they are standard ones that carry no secret or the
// webhook asked for them, and that the headers it asked for arrive intact.
func webhookRecordsAllowedHeaders(t *testing.T, e *env) {
	srv := webhookServer(t, e)
	run := start(t, e, headersSeen, struct{}{})
	tokens := publishedTokens(t, e, run, 2)
	request := func(secret string) http.Header {
		return http.Header{
			"Authorization":                   {"Bearer auth-" + secret},
			"Proxy-Authorization":             {"Basic proxy-" + secret},
			"Cookie":                          {"session=cookie-" + secret},
			"X-Api-Key":                       {"key-" + secret},
			"X-Gitlab-Token":                  {"gitlab-" + secret},
			"X-Telegram-Bot-Api-Secret-Token": {"telegram-" + secret},
			"Api-Key":                         {"apikey-" + secret},
			"X-Signature":                     {"sha256=one", "sha256=two"},
			"Content-Type":                    {"text/plain"},
			"User-Agent":                      {"flowtest/1"},
		}
	}
	for i, secret := range []string{"default-secret", "allowed-secret"} {
		if code, _ := postWebhook(t, workflow.WebhookURL(srv.URL, tokens[i]), "hi", request(secret)); code != http.StatusAccepted {
			t.Fatalf("webhook %d: %d, want 202", i, code)
		}
	}
	seen := result(t, e, run)

	// By default only the standard headers that carry no secret: a
	// sender's token under a name no list of credentials foresees stays out.
	if want := (http.Header{"Content-Type": {"text/plain"}, "User-Agent": {"flowtest/1"}}); !reflect.DeepEqual(seen[0], want) {
		t.Errorf("a webhook without WithRequestHeaders recorded %v, want exactly %v", seen[0], want)
	}
	want := http.Header{"Authorization": {"Bearer auth-allowed-secret"}, "X-Signature": {"sha256=one", "sha256=two"}}
	if !reflect.DeepEqual(seen[1], want) {
		t.Errorf("a webhook with WithRequestHeaders(authorization, X-Signature) recorded %v, want exactly %v", seen[1], want)
	}

	// What the workflow did not receive is not stored either.
	events, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"default-secret", "cookie-allowed-secret", "proxy-allowed-secret", "key-allowed-secret", "gitlab-allowed-secret"} {
		for _, ev := range events {
			if bytes.Contains(ev.Payload, []byte(secret)) {
				t.Errorf("the run's log holds %q, which no webhook asked to record: %s %s", secret, ev.Type, ev.Payload)
			}
		}
	}
}
