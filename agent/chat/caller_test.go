package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// testUser is the tests' authentication: the caller named by a header.
func testUser(r *http.Request) (string, error) {
	if u := r.Header.Get("X-Test-User"); u != "" {
		return u, nil
	}
	return "", errors.New("sign in first")
}

// TestWithCallerBindsASessionToItsCaller: without WithCaller, whoever
// sends another's idempotency key joins that session; with it, the same
// key names a session per caller, a caller reaches only its own sessions
// whatever IDs it learns, and a request the application does not
// authenticate starts nothing.
func TestWithCallerBindsASessionToItsCaller(t *testing.T) {
	_, srv := serveRoutes(t, memory.New(), func(c *workflow.Client) map[string]http.Handler {
		return map[string]http.Handler{"/open": sessions.Handler(c, "/open"), "/bound": sessions.Handler(c, "/bound", chat.WithCaller(testUser))}
	})

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

// TestWithCallerBindsApprovalsToTheCaller: a tool call's ID reaches
// whoever reads the session's stream, so with WithCaller the approval
// route decides a call only for the caller whose run waits on it: another
// caller gets the 404 of an unknown call, and an unauthenticated request
// decides nothing.
func TestWithCallerBindsApprovalsToTheCaller(t *testing.T) {
	c, srv := serveRoutes(t, memory.New(), func(c *workflow.Client) map[string]http.Handler {
		return map[string]http.Handler{
			"/bound":      sessions.Handler(c, "/bound", chat.WithCaller(testUser)),
			"/approvals/": chat.ApprovalHandler(c, "/approvals", chat.WithCaller(testUser)),
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The caller's tag, as a run started through the bound handler carries it.
	resp := request(t, "POST", srv.URL+"/bound", "application/json", `{"messages":[]}`, "X-Test-User", "ana")
	var info chat.SessionInfo
	_ = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	session, err := c.World().GetRun(ctx, info.SessionID)
	if err != nil {
		t.Fatalf("ana's session %q: %v", info.SessionID, err)
	}
	run, err := workflow.Start(ctx, c, awaitsApproval, "call-of-ana",
		workflow.WithAttributes(map[string]string{chat.CallerAttribute: session.Attributes[chat.CallerAttribute]}))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := c.GetHook(ctx, "call-of-ana"); err != nil; _, err = c.GetHook(ctx, "call-of-ana") {
		if ctx.Err() != nil {
			t.Fatalf("the run never waited on its call: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	decide := func(who string) int {
		resp := request(t, "POST", srv.URL+"/approvals/call-of-ana", "", `{"approved":true}`, "X-Test-User", who)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := decide("bob"); got != http.StatusNotFound {
		t.Fatalf("bob deciding ana's call: %d, want 404", got)
	}
	if got := decide(""); got != http.StatusUnauthorized {
		t.Fatalf("an unauthenticated decision: %d, want 401", got)
	}
	if got := decide("ana"); got != http.StatusAccepted {
		t.Fatalf("ana deciding her call: %d, want 202", got)
	}
	if approved, err := run.Result(ctx); err != nil || !approved {
		t.Fatalf("run result %v, %v; want ana's approval", approved, err)
	}
}
