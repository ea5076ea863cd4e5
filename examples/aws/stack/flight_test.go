package stack_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
)

// greeting is the traveller's first message: the stand-in hands its model
// call to the emulator's Bedrock, whose mock answers with text.
const greeting = "Hello! Can you help me fly to New York?"

// bedrockStandIn is the Bedrock Runtime endpoint the stack's flow function
// calls for the flight agent (bedrock-endpoint in FlowSettings): a call that answers
// the greeting goes on to the emulator's Bedrock, the booking's calls get
// the tool calls the emulator's mock model never makes, from a script.
type bedrockStandIn struct {
	URL      string
	proxied  atomic.Int32
	scripted *fakeprovider.Server
}

func startBedrockStandIn(t *testing.T, bookID string) *bedrockStandIn {
	s := &bedrockStandIn{scripted: fakeprovider.Start(t, fakeprovider.EventStream)}
	// Chosen by how far the booking has got, so that a retried call gets
	// the same answer.
	s.scripted.Answer(func(r fakeprovider.Request) fakeprovider.Reply {
		switch strings.Count(string(r.Body), `"toolResult"`) {
		case 0:
			return toolUse("Let me look. ", "call-search", "search_flights", `{"from":"SFO","to":"JFK","date":"2026-12-24"}`)
		case 1:
			return toolUse("UA415 is the cheapest. ", "call-hold", "hold_seat", `{"flight":"UA415"}`)
		case 2:
			return toolUse("Booking it once you approve. ", bookID, "book_flight", `{"hold":"H-UA415","passenger":"Ana Lima","price":318}`)
		}
		return textReply("You're booked on UA415, confirmation CONF-UA415.")
	})
	target, err := url.Parse(emulator.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	toEmulator := httputil.NewSingleHostReverseProxy(target)
	scriptURL, _ := url.Parse(s.scripted.URL)
	toScript := httputil.NewSingleHostReverseProxy(scriptURL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if lastUserText(body) == greeting {
			s.proxied.Add(1)
			toEmulator.ServeHTTP(w, r)
			return
		}
		toScript.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// lastUserText is the text of a Converse request's last message.
func lastUserText(body []byte) string {
	var req struct {
		Messages []struct {
			Content []struct{ Text string }
		}
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return ""
	}
	last := req.Messages[len(req.Messages)-1]
	if len(last.Content) == 0 {
		return ""
	}
	return last.Content[0].Text
}

// toolUse is a ConverseStream answer of text and one tool call.
func toolUse(text, id, name, input string) fakeprovider.Reply {
	start, _ := json.Marshal(map[string]any{"contentBlockIndex": 1, "start": map[string]any{"toolUse": map[string]string{"name": name, "toolUseId": id}}})
	delta, _ := json.Marshal(map[string]any{"contentBlockIndex": 1, "delta": map[string]any{"toolUse": map[string]string{"input": input}}})
	r := textReply(text)
	r.Events = append(r.Events[:len(r.Events)-2],
		fakeprovider.Event{Type: "contentBlockStart", Data: string(start)},
		fakeprovider.Event{Type: "contentBlockDelta", Data: string(delta)},
		fakeprovider.Event{Type: "contentBlockStop", Data: `{"contentBlockIndex":1}`},
		fakeprovider.Event{Type: "messageStop", Data: `{"stopReason":"tool_use"}`},
		r.Events[len(r.Events)-1])
	return r
}

// textReply is a ConverseStream answer of text alone.
func textReply(text string) fakeprovider.Reply {
	delta, _ := json.Marshal(map[string]any{"contentBlockIndex": 0, "delta": map[string]string{"text": text}})
	return fakeprovider.Reply{Events: []fakeprovider.Event{
		{Type: "messageStart", Data: `{"role":"assistant"}`},
		{Type: "contentBlockDelta", Data: string(delta)},
		{Type: "contentBlockStop", Data: `{"contentBlockIndex":0}`},
		{Type: "messageStop", Data: `{"stopReason":"end_turn"}`},
		{Type: "metadata", Data: `{"usage":{"inputTokens":100,"outputTokens":10,"totalTokens":110},"metrics":{"latencyMs":5}}`},
	}}
}

// checkFlightAgent books a flight with the stack's flight agent over its
// Function URL, as a traveller's client does, with SigV4-signed calls:
// the greeting's turn streams the emulator's Bedrock mock text back; the
// booking request is taken (202), its approval waits until the agent asks
// for it, the session is ended, and the session's stream, read from a
// cursor, holds the tool calls, the approved booking and the confirmation,
// and read again from a later cursor exactly its tail. The emulator hands
// a RESPONSE_STREAM function's output over only once it ends, so the
// client waits for each response whole; examples/aws/flight's test proves
// the parts leave the function as they are written.
func checkFlightAgent(t *testing.T, ctx context.Context, base string, bedrock *bedrockStandIn, bookID string) {
	start := time.Now()
	c := &traveller{base: strings.TrimSuffix(base, "/")}
	status, header, body := c.do(t, ctx, "POST", "/flight/sessions", chat.ContentTypeNDJSON, chat.Turn{Messages: []agent.Message{agent.UserMessage(greeting)}})
	session := header.Get(chat.RunIDHeader)
	first := ndjson(t, body)
	if status != http.StatusOK || session == "" || first.end != "running" || !strings.HasPrefix(agent.Text(first.parts), "[ministack mock") {
		t.Fatalf("the greeting's turn: %d, session %q, end %q, text %q", status, session, first.end, agent.Text(first.parts))
	}

	messages := "/flight/sessions/" + session + "/messages"
	if status, _, body := c.do(t, ctx, "POST", messages, "application/json", chat.Message{Text: "Book me SFO to JFK on Dec 24 for Ana Lima."}); status != http.StatusAccepted {
		t.Fatalf("the booking request: %d %s", status, body)
	}
	// The approval route waits a few seconds for a call that is not yet
	// waiting, then 404s: ask again until the agent has got there.
	for {
		status, _, body := c.do(t, ctx, "POST", "/flight/approvals/"+bookID, "application/json", agent.Approval{Approved: true, Comment: "yes"})
		if status == http.StatusAccepted {
			break
		}
		if status != http.StatusNotFound || ctx.Err() != nil {
			t.Fatalf("approving the booking: %d %s", status, body)
		}
	}
	if status, _, body := c.do(t, ctx, "POST", messages, "application/json", chat.Message{End: true}); status != http.StatusAccepted {
		t.Fatalf("ending the session: %d %s", status, body)
	}

	cursor := first.next
	stream := "/flight/sessions/" + session + "/stream?" + chat.StartIndexParam + "="
	_, _, body = c.do(t, ctx, "GET", stream+fmt.Sprint(cursor), chat.ContentTypeNDJSON, nil)
	rest := ndjson(t, body)
	var booked *agent.ToolResult
	for _, p := range rest.parts {
		if p.Type == agent.PartToolResult && p.ToolResult.Name == "book_flight" {
			booked = p.ToolResult
		}
	}
	if rest.end != "completed" || rest.first != cursor || booked == nil || booked.Outcome != agent.Success || !strings.HasSuffix(agent.Text(rest.parts), "confirmation CONF-UA415.") {
		t.Fatalf("the session's stream from %d: from %d, end %q, book_flight %+v, text %q", cursor, rest.first, rest.end, booked, agent.Text(rest.parts))
	}
	later := cursor + int64(len(rest.parts))/2
	_, _, body = c.do(t, ctx, "GET", stream+fmt.Sprint(later), chat.ContentTypeNDJSON, nil)
	if tail := ndjson(t, body); tail.first != later || tail.end != "completed" || len(tail.raw) != len(rest.raw[later-cursor:]) || strings.Join(tail.raw, "\n") != strings.Join(rest.raw[later-cursor:], "\n") {
		t.Fatalf("reconnected from %d: %d parts from %d, want the %d after it", later, len(tail.raw), tail.first, len(rest.raw[later-cursor:]))
	}
	if n := bedrock.proxied.Load(); n != 1 || bedrock.scripted.Billed() != 4 {
		t.Fatalf("model calls: %d to the emulator's Bedrock, %d scripted; want 1 and 4", n, bedrock.scripted.Billed())
	}
	t.Logf("flight agent: %d calls to its Function URL, 5 model calls, in %v", c.calls, time.Since(start).Round(time.Millisecond))
}

// traveller calls the flight function's URL, signing each call as a
// caller with IAM credentials does (its AuthType is AWS_IAM).
type traveller struct {
	base  string
	calls int
}

func (c *traveller) do(t *testing.T, ctx context.Context, method, path, accept string, body any) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		b = nil // a GET's
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	cfg := emulator.Config()
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256(b)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(hash[:]), "lambda", cfg.Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	c.calls++
	return roundTrip(t, req)
}

// streamed is an NDJSON stream read whole: its parts with their raw
// lines, the index of the first, the index after the last, and the end.
type streamed struct {
	parts       []agent.Part
	raw         []string
	first, next int64
	end         string
}

func ndjson(t *testing.T, body []byte) streamed {
	t.Helper()
	s := streamed{first: -1}
	dec := json.NewDecoder(bytes.NewReader(body))
	for dec.More() {
		var line struct {
			Index int64           `json:"index"`
			Part  json.RawMessage `json:"part"`
			End   string          `json:"end"`
			Error string          `json:"error"`
		}
		if err := dec.Decode(&line); err != nil {
			t.Fatalf("the stream %q: %v", body, err)
		}
		switch {
		case line.Error != "":
			t.Fatalf("the stream failed: %s", line.Error)
		case line.End != "":
			s.end = line.End
			continue
		}
		var p agent.Part
		if err := json.Unmarshal(line.Part, &p); err != nil {
			t.Fatal(err)
		}
		if s.first < 0 {
			s.first = line.Index
		}
		s.parts, s.raw, s.next = append(s.parts, p), append(s.raw, string(line.Part)), line.Index+1
	}
	return s
}
