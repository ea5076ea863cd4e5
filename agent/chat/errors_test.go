package chat_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
)

// Bad requests get a 4xx that says what is wrong, and the session they
// were aimed at goes on as if they had not been sent.
func TestBadRequestsAreRefusedAndLoseNothing(t *testing.T) {
	c, srv := serve(t, worlds["memory"](t))
	m, release := script(agenttest.Answer("hi"), agenttest.Answer("still here"))
	release()
	start := request(t, "POST", srv.URL+"/sessions", chat.ContentTypeSSE, userTurn("hello"))
	id := start.Header.Get(chat.RunIDHeader)
	frames(t, start)
	turn := request(t, "POST", srv.URL+"/chat", chat.ContentTypeSSE, userTurn("one turn"))
	turnID := turn.Header.Get(chat.RunIDHeader)
	frames(t, turn)

	msgs := srv.URL + "/sessions/" + id + "/messages"
	for _, tc := range []struct {
		name, method, url, accept, body string
		headers                         []string
		status                          int
		says                            string
	}{
		{"malformed JSON", "POST", msgs, "", `{"text":`, nil, 400, "not the JSON expected"},
		{"unknown field", "POST", msgs, "", `{"txt":"hi"}`, nil, 400, "unknown field"},
		{"two values", "POST", msgs, "", `{"text":"a"}{"text":"b"}`, nil, 400, "more than one"},
		{"empty message", "POST", msgs, "", `{"text":"  "}`, nil, 400, "needs text"},
		{"oversized body", "POST", msgs, "", `{"text":"` + strings.Repeat("x", chat.DefaultMaxBodyBytes) + `"}`, nil, 413, "larger than"},
		{"not JSON", "POST", msgs, "", "hi", []string{"Content-Type", "text/plain"}, 415, "application/json"},
		// A page on another site can send these without a preflight.
		{"message without a Content-Type", "POST", msgs, "", `{"text":"hi"}`, []string{"Content-Type", ""}, 415, "Content-Type: application/json"},
		{"message as text/plain", "POST", msgs, "", `{"text":"hi"}`, []string{"Content-Type", "text/plain;charset=UTF-8"}, 415, "application/json"},
		{"session without a Content-Type", "POST", srv.URL + "/sessions", "", userTurn("hi"), []string{"Content-Type", ""}, 415, "Content-Type: application/json"},
		{"turn without a Content-Type", "POST", srv.URL + "/chat", "", userTurn("hi"), []string{"Content-Type", ""}, 415, "Content-Type: application/json"},
		{"approval without a Content-Type", "POST", srv.URL + "/approvals/call-nope", "", `{"approved":true}`, []string{"Content-Type", ""}, 415, "Content-Type: application/json"},
		{"unacceptable framing", "POST", msgs, "image/png", `{"text":"hi"}`, nil, 406, "text/event-stream"},
		{"unknown session", "POST", srv.URL + "/sessions/wrun_nope/messages", "", `{"text":"hi"}`, nil, 404, "unknown session"},
		{"a turn is no session", "POST", srv.URL + "/sessions/" + turnID + "/messages", "", `{"text":"hi"}`, nil, 404, "unknown session"},
		{"reconnect to no session", "GET", srv.URL + "/sessions/wrun_nope/stream", "", "", nil, 404, "unknown session"},
		{"reconnect to no turn", "GET", srv.URL + "/chat/" + id + "/stream", "", "", nil, 404, "unknown session"},
		{"negative cursor", "GET", srv.URL + "/sessions/" + id + "/stream?startIndex=-1", "", "", nil, 400, "non-negative integer"},
		{"cursor not a number", "GET", srv.URL + "/sessions/" + id + "/stream?startIndex=abc", "", "", nil, 400, "non-negative integer"},
		{"bad Last-Event-ID", "GET", srv.URL + "/sessions/" + id + "/stream", "", "", []string{"Last-Event-ID", "x"}, 400, "Last-Event-ID"},
		{"bad cursor on a message", "POST", msgs + "?startIndex=1.5", "", `{"text":"hi"}`, nil, 400, "startIndex"},
		{"turn without a user message", "POST", srv.URL + "/chat", "", `{"messages":[]}`, nil, 400, "end with a user message"},
		{"unknown role", "POST", srv.URL + "/chat", "", `{"messages":[{"role":"boss","text":"hi"}]}`, nil, 400, "unknown role"},
		{"huge idempotency key", "POST", msgs, "", `{"text":"hi"}`, []string{chat.IdempotencyKeyHeader, strings.Repeat("k", 300)}, 400, "Idempotency-Key"},
		{"wrong method", "PUT", msgs, "", `{"text":"hi"}`, nil, 405, ""},
		{"approval of no waiting call", "POST", srv.URL + "/approvals/call-nope", "", `{"approved":true}`, nil, 404, "no tool call waits"},
		{"malformed approval", "POST", srv.URL + "/approvals/call-nope", "", `{"approved":`, nil, 400, "not the JSON expected"},
	} {
		resp := request(t, tc.method, tc.url, tc.accept, tc.body, tc.headers...)
		var body struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(body.Error, tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, resp.StatusCode, body.Error, tc.status, tc.says)
		}
	}

	// Nothing of that reached the session: the next message is its second.
	resp := request(t, "POST", msgs, chat.ContentTypeSSE, `{"text":"are you there?"}`)
	if parts, _ := frames(t, resp); agent.Text(partsOf(parts)) != "still here" {
		t.Fatalf("after the bad requests the session answered %q", agent.Text(partsOf(parts)))
	}
	if err := sessions.Send(t.Context(), c, id, chat.Message{End: true}); err != nil {
		t.Fatal(err)
	}
	res := must(must(workflow.GetRun[*agent.Result](t.Context(), c, id)).Result(t.Context()))
	if got := userTexts(res.Messages); !slices.Equal(got, []string{"hello", "are you there?"}) || m.Calls() != 3 {
		t.Fatalf("user messages %q, %d model calls", got, m.Calls())
	}

	// An ended session takes no more messages, and says so.
	resp = request(t, "POST", msgs, "", `{"text":"hello?"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("a message to an ended session: %d, want 409", resp.StatusCode)
	}
}

// A turn POSTed twice with one idempotency key is one run, billed once.
func TestARetriedTurnIsOneRun(t *testing.T) {
	_, srv := serve(t, worlds["memory"](t))
	m, release := script(agenttest.Answer("once"))
	release()
	var ids []string
	for range 2 {
		resp := request(t, "POST", srv.URL+"/chat", chat.ContentTypeNDJSON, userTurn("hi"), chat.IdempotencyKeyHeader, "turn-1")
		parts, end := frames(t, resp)
		if agent.Text(partsOf(parts)) != "once" || end.End != string(workflow.StatusCompleted) {
			t.Fatalf("turn %q, end %+v", agent.Text(partsOf(parts)), end)
		}
		ids = append(ids, resp.Header.Get(chat.RunIDHeader))
	}
	if ids[0] != ids[1] || m.Calls() != 1 {
		t.Fatalf("runs %q, %d model calls", ids, m.Calls())
	}
}

// An idle stream carries keep-alives, so that proxies keep it open, and
// still ends when the session does.
func TestAnIdleStreamKeepsTheConnectionAlive(t *testing.T) {
	c, srv := serve(t, worlds["memory"](t))
	_, release := script()
	release()
	quick := httptest.NewServer(sessions.Handler(c, "/sessions", chat.WithHeartbeat(20*time.Millisecond)))
	defer quick.Close()
	start := request(t, "POST", srv.URL+"/sessions", "", `{"messages":[]}`)
	start.Body.Close()
	id := start.Header.Get(chat.RunIDHeader)
	resp := request(t, "GET", quick.URL+"/sessions/"+id+"/stream", chat.ContentTypeSSE, "")
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for alive := 0; alive < 2 && lines.Scan(); {
		if lines.Text() == ": keep-alive" {
			alive++
		}
	}
	if err := sessions.Send(t.Context(), c, id, chat.Message{End: true}); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		if lines.Text() == "event: end" {
			return
		}
	}
	t.Fatalf("the stream broke off without its end: %v", lines.Err())
}
