package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// lookups is a World that counts hook lookups and, when failing is set,
// fails them with an error that names the token, as an SDK error names
// the key it was given.
type lookups struct {
	*memory.World
	n       atomic.Int64
	failing bool
}

func (l *lookups) GetHook(ctx context.Context, token string) (world.Hook, error) {
	l.n.Add(1)
	if l.failing {
		return world.Hook{}, fmt.Errorf("GetItem hook#%s: service unavailable", token)
	}
	return l.World.GetHook(ctx, token)
}

// serve answers one request to the route for token.
func serve(h http.Handler, token string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, workflow.WebhookPath+token, strings.NewReader("{}")))
	return rec
}

// A token longer than any generated one (an attacker's 3,000 bytes, past
// DynamoDB's 2,048-byte key limit) is a 404, answered without asking the
// World.
func TestRouteAnswersOverlongTokensNotFound(t *testing.T) {
	w := &lookups{World: memory.New()}
	h := webhook.NewHandler(workflow.NewClient(w))
	for _, n := range []int{30, 3000} {
		if rec := serve(h, "hk_"+strings.Repeat("A", n)); rec.Code != http.StatusNotFound {
			t.Errorf("token of %d bytes: %d, want 404", n+3, rec.Code)
		}
	}
	if n := w.n.Load(); n != 0 {
		t.Errorf("the World was asked for %d overlong tokens, want none", n)
	}
	if rec := serve(h, "hk_"+strings.Repeat("A", 26)); rec.Code != http.StatusNotFound || w.n.Load() != 1 {
		t.Errorf("a token shaped like a generated one: %d after %d lookups, want a 404 from one lookup", rec.Code, w.n.Load())
	}
}

// The route logs a failure without the token: the token is the webhook's
// only credential.
func TestRouteNeverLogsTokens(t *testing.T) {
	var logs bytes.Buffer
	h := webhook.NewHandler(workflow.NewClient(&lookups{World: memory.New(), failing: true}),
		webhook.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	token := "hk_" + strings.Repeat("S", 26)
	if rec := serve(h, token); rec.Code != http.StatusInternalServerError {
		t.Fatalf("a failing World: %d, want 500", rec.Code)
	}
	if !strings.Contains(logs.String(), "service unavailable") {
		t.Fatalf("the failure was not logged: %q", logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the log names the token: %q", logs.String())
	}
}

// Anyone holding a webhook's URL can call it, but not without end: once
// the run's log is full the route answers 429 and records nothing more.
func TestRouteAnswers429WhenTheRunsLogIsFull(t *testing.T) {
	const limit = 12
	f := setupWith(t, []workflow.ClientOption{workflow.WithMaxEvents(limit)})
	run, url := f.start(t, hookSpec{Mode: "accept", Calls: 1000})
	for i := range 2 * limit {
		resp, _ := f.call(t, http.MethodPost, url, "flood")
		if resp.StatusCode == http.StatusTooManyRequests {
			evs, err := f.world.Events(f.ctx, run.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			// The route's own writes stop at the limit: no request is
			// recorded past it. The worker (whose limit is its own,
			// the default here) may still record the run's steps.
			for _, ev := range evs {
				if ev.Slot > limit && ev.Type == world.HookReceived {
					t.Fatalf("after a 429 the route's request sits at slot %d of the log; want none past %d", ev.Slot, limit)
				}
			}
			return
		}
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("call %d: %d, want 202 or 429", i, resp.StatusCode)
		}
	}
	t.Fatalf("%d calls and no 429 from a run whose log holds at most %d events", 2*limit, limit)
}
