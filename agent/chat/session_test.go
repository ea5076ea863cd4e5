package chat_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
)

// Messages from a user, a system event and another service arrive while
// the model is mid-turn (one of them delivered twice): none reaches the
// turn in progress, each is taken once, in the order sent, and every
// reader of the stream sees who said what before the answer.
func TestMessagesSentMidTurnAreQueuedAndTakenInOrder(t *testing.T) {
	for name, open := range worlds {
		t.Run(name, func(t *testing.T) {
			c, srv := serve(t, open(t))
			m, release := script(agenttest.Answer("hello to you"), agenttest.Answer("noted all three"))
			defer release()
			first := request(t, "POST", srv.URL+"/sessions", chat.ContentTypeNDJSON, userTurn("hello"))
			id := first.Header.Get(chat.RunIDHeader)
			waitMidTurn(t)

			sent := []struct{ key, body string }{
				{"k1", `{"from":"ana","text":"one"}`},
				{"k2", `{"from":"system","text":"two"}`},
				{"k2", `{"from":"system","text":"two"}`}, // the same request, retried
				{"k3", `{"from":"payments","text":"three"}`},
			}
			for _, s := range sent {
				resp := request(t, "POST", srv.URL+"/sessions/"+id+"/messages", "application/json", s.body, chat.IdempotencyKeyHeader, s.key)
				var info chat.SessionInfo
				if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusAccepted || info.MessageID != s.key {
					t.Fatalf("POST message: %d %+v %v", resp.StatusCode, info, err)
				}
				resp.Body.Close()
			}
			release()
			parts, end := frames(t, first)
			if end.End != string(workflow.StatusRunning) || parts[len(parts)-1].Part.Type != agent.PartFinish {
				t.Fatalf("the first turn's stream ended with %+v after %+v", end, parts[len(parts)-1])
			}
			if text := agent.Text(partsOf(parts)); text != "hello to you" {
				t.Fatalf("first turn %q", text)
			}

			// Ending the session streams until its run ends.
			bye := request(t, "POST", srv.URL+"/sessions/"+id+"/messages", chat.ContentTypeSSE, `{"end":true}`)
			if _, end := frames(t, bye); end.End != string(workflow.StatusCompleted) {
				t.Fatalf("end %+v", end)
			}
			res := must(must(workflow.GetRun[*agent.Result](t.Context(), c, id)).Result(t.Context()))
			if got, want := userTexts(res.Messages), []string{"hello", "[ana] one", "[system] two", "[payments] three"}; !slices.Equal(got, want) {
				t.Fatalf("the session's user messages %q, want %q", got, want)
			}
			// The turn in progress saw none of them; how many later turns took
			// them depends on what had landed when a turn ended (on AWS, the
			// run's inbox may hand them over in more than one batch).
			reqs := m.Requests()
			if len(reqs) < 2 || len(reqs) > 4 || len(userTexts(reqs[0].Messages)) != 1 {
				t.Fatalf("%d model calls; the first saw %q", len(reqs), userTexts(reqs[0].Messages))
			}
			var markers []string
			for _, f := range fullStream(t, c, id) {
				if f.Part.Type == agent.PartMessage {
					markers = append(markers, f.Part.MessageID+":"+f.Part.From)
				}
			}
			if want := []string{"k1:ana", "k2:system", "k3:payments"}; !slices.Equal(markers, want) {
				t.Fatalf("message parts %q, want %q", markers, want)
			}
		})
	}
}

// A message's response, without a cursor, is its own turn: from its
// marker to the answer's finish; with a cursor, everything after it.
func TestAMessageStreamsTheTurnThatAnswersIt(t *testing.T) {
	c, srv := serve(t, worlds["memory"](t))
	_, release := script(agenttest.Answer("first"), agenttest.Answer("second answer"))
	release()
	start := request(t, "POST", srv.URL+"/sessions", chat.ContentTypeSSE, userTurn("hi"))
	id := start.Header.Get(chat.RunIDHeader)
	before, _ := frames(t, start)

	resp := request(t, "POST", srv.URL+"/sessions/"+id+"/messages", chat.ContentTypeSSE, `{"text":"more"}`, chat.IdempotencyKeyHeader, "m2")
	parts, end := frames(t, resp)
	if p := parts[0].Part; p.Type != agent.PartMessage || p.MessageID != "m2" || p.Text != "more" || parts[0].Index != int64(len(before)) {
		t.Fatalf("the message's stream begins with #%d %+v", parts[0].Index, p)
	}
	if end.End != string(workflow.StatusRunning) || agent.Text(partsOf(parts)) != "second answer" {
		t.Fatalf("turn %q, end %+v", agent.Text(partsOf(parts)), end)
	}

	// The same message again (a retried request) is not taken twice, and
	// its response is the same turn.
	again := request(t, "POST", srv.URL+"/sessions/"+id+"/messages?startIndex=1", chat.ContentTypeNDJSON, `{"text":"more"}`, chat.IdempotencyKeyHeader, "m2")
	fromOne, _ := frames(t, again)
	checkFrom(t, "the retried message with a cursor", fromOne, slices.Concat(before, parts), 1)
	if err := sessions.Send(t.Context(), c, id, chat.Message{End: true}); err != nil {
		t.Fatal(err)
	}
	res := must(must(workflow.GetRun[*agent.Result](t.Context(), c, id)).Result(t.Context()))
	if got := userTexts(res.Messages); !slices.Equal(got, []string{"hi", "more"}) {
		t.Fatalf("user messages %q", got)
	}
}

func userTexts(ms []agent.Message) []string {
	var out []string
	for _, m := range ms {
		if m.Role == agent.RoleUser {
			out = append(out, m.Text)
		}
	}
	return out
}
