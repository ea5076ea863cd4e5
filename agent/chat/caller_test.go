package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// TestWithCallerBindsASessionToItsCaller: without WithCaller, whoever
// sends another's idempotency key joins that session; with it, the same
// key names a session per caller, a caller reaches only its own sessions
// whatever IDs it learns, and a request the application does not
// authenticate starts nothing.
func TestWithCallerBindsASessionToItsCaller(t *testing.T) {
	w := memory.New()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx) }()
	c := workflow.NewClient(w)
	user := func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-Test-User"); u != "" {
			return u, nil
		}
		return "", errors.New("sign in first")
	}
	mux := http.NewServeMux()
	for path, h := range map[string]http.Handler{"/open": sessions.Handler(c, "/open"), "/bound": sessions.Handler(c, "/bound", chat.WithCaller(user))} {
		mux.Handle(path, h)
		mux.Handle(path+"/", h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); cancel(); <-done })

	start := func(path, who, key string) (int, string) {
		resp := request(t, "POST", srv.URL+path, "application/json", `{"messages":[]}`, "X-Test-User", who, chat.IdempotencyKeyHeader, key)
		defer resp.Body.Close()
		var info chat.SessionInfo
		_ = json.NewDecoder(resp.Body).Decode(&info)
		return resp.StatusCode, info.SessionID
	}
	status := func(method, path, who, body string) int {
		accept := "application/json"
		if method == "GET" {
			accept = chat.ContentTypeNDJSON
		}
		resp := request(t, method, srv.URL+path, accept, body, "X-Test-User", who)
		resp.Body.Close()
		return resp.StatusCode
	}

	// The documented rule without it: the key is the session's secret.
	_, ana := start("/open", "ana", "order-42")
	if _, bob := start("/open", "bob", "order-42"); bob != ana {
		t.Fatalf("without WithCaller the same key gave sessions %s and %s; the docs say it joins", ana, bob)
	}

	code, ana := start("/bound", "ana", "order-42")
	if code != http.StatusCreated || ana == "" {
		t.Fatalf("ana's start: %d %q", code, ana)
	}
	if _, again := start("/bound", "ana", "order-42"); again != ana {
		t.Fatalf("ana's retried start: session %s, want %s", again, ana)
	}
	_, bob := start("/bound", "bob", "order-42")
	if bob == "" || bob == ana {
		t.Fatalf("bob sending ana's key got session %q (ana's is %s)", bob, ana)
	}
	for _, probe := range []struct{ method, path, body string }{
		{"POST", "/bound/" + ana + "/messages", `{"text":"hi"}`},
		{"GET", "/bound/" + ana + "/stream", ""},
	} {
		if got := status(probe.method, probe.path, "bob", probe.body); got != http.StatusNotFound {
			t.Errorf("bob's %s %s: %d, want 404", probe.method, probe.path, got)
		}
		if got := status(probe.method, probe.path, "", probe.body); got != http.StatusUnauthorized {
			t.Errorf("an unauthenticated %s %s: %d, want 401", probe.method, probe.path, got)
		}
	}
	_, release := script(agenttest.Answer("hello, ana"))
	release()
	if got := status("POST", "/bound/"+ana+"/messages", "ana", `{"text":"hi"}`); got != http.StatusAccepted {
		t.Errorf("ana's message to her session: %d, want 202", got)
	}
	if code, id := start("/bound", "", "order-42"); code != http.StatusUnauthorized || id != "" {
		t.Fatalf("an unauthenticated start: %d %q, want 401", code, id)
	}
}
