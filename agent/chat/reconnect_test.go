package chat_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/internal/testrig/readcount"
)

// 100 clients connect to one turn's stream while the model is mid-answer,
// each from its own cursor (as a startIndex or as an SSE Last-Event-ID),
// half over SSE and half over NDJSON, some past what is written yet and
// some past the end: each gets exactly the parts from its cursor on, as
// the run's stream holds them, then the end.
func TestHundredClientsGetExactlyThePartsAfterTheirCursor(t *testing.T) {
	for name, open := range worlds {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			c, srv := serve(t, w)
			_, release := script(agenttest.Answer(words(60)))
			defer release()
			first := request(t, "POST", srv.URL+"/chat", chat.ContentTypeNDJSON, userTurn("tell me"))
			runID := first.Header.Get(chat.RunIDHeader)
			if first.StatusCode != http.StatusOK || runID == "" {
				t.Fatalf("POST /chat: %d, run %q", first.StatusCode, runID)
			}
			waitMidTurn(t)

			const clients, total = 100, 63 // start, 60 text deltas, finish-step, finish
			resps := make([]*http.Response, clients)
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					from := int64(i % (total + 3))
					accept, headers := chat.ContentTypeSSE, []string{}
					if i%2 == 1 {
						accept = chat.ContentTypeNDJSON
					}
					url := fmt.Sprintf("%s/chat/%s/stream?startIndex=%d", srv.URL, runID, from)
					if i%4 == 0 && from > 0 {
						// EventSource's reconnect: its original URL, and the last ID it got.
						url = fmt.Sprintf("%s/chat/%s/stream?startIndex=0", srv.URL, runID)
						headers = []string{"Last-Event-ID", strconv.FormatInt(from-1, 10)}
					}
					resps[i] = request(t, "GET", url, accept, "", headers...)
				})
			}
			wg.Wait() // every client is connected, the model still mid-answer
			release()

			want := fullStream(t, c, runID)
			if len(want) != total {
				t.Fatalf("the run's stream has %d parts, want %d", len(want), total)
			}
			firstParts, _ := frames(t, first)
			checkFrom(t, "the POST", firstParts, want, 0)
			for i, resp := range resps {
				got, end := frames(t, resp)
				if end.End != string(workflow.StatusCompleted) {
					t.Fatalf("client %d: end %+v", i, end)
				}
				checkFrom(t, fmt.Sprintf("client %d", i), got, want, int64(i%(total+3)))
			}
			if aw, ok := w.(interface{ Calls() map[string]int64 }); ok {
				t.Logf("AWS calls, worker and 101 readers: %v", aw.Calls())
			}
		})
	}
}

// A client that goes away mid-stream and reconnects with Last-Event-ID
// gets the rest: no part missing, none twice, and the run never noticed.
func TestDisconnectMidStreamThenReconnectGetsTheRest(t *testing.T) {
	for name, open := range worlds {
		t.Run(name, func(t *testing.T) {
			c, srv := serve(t, open(t))
			_, release := script(agenttest.Answer(words(20)))
			defer release()
			ctx, hangUp := context.WithCancel(t.Context())
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/chat", strings.NewReader(userTurn("hi")))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			runID := resp.Header.Get(chat.RunIDHeader)
			var got []frame
			for f, err := range readSSE(resp.Body) {
				if err != nil {
					t.Fatal(err)
				}
				if got = append(got, f); len(got) == 2 {
					break
				}
			}
			hangUp() // mid-stream: the model is held after its second delta
			resp.Body.Close()
			release()

			again := request(t, "GET", srv.URL+"/chat/"+runID+"/stream", chat.ContentTypeSSE, "",
				"Last-Event-ID", strconv.FormatInt(got[len(got)-1].Index, 10))
			rest, end := frames(t, again)
			if end.End != string(workflow.StatusCompleted) {
				t.Fatalf("end %+v", end)
			}
			want := fullStream(t, c, runID)
			checkFrom(t, "before and after the reconnect", append(got, rest...), want, 0)
			if text := agent.Text(partsOf(want)); text != words(20) {
				t.Fatalf("the answer %q", text)
			}
		})
	}
}

// fullStream reads the run's stream in the agent's namespace directly,
// from the start, once the run has ended.
func fullStream(t *testing.T, c *workflow.Client, runID string) []frame {
	t.Helper()
	run := must(workflow.GetRun[*agent.Result](t.Context(), c, runID))
	if _, err := run.Result(t.Context()); err != nil {
		t.Fatal(err)
	}
	var all []frame
	for chunk, err := range run.Readable(t.Context(), assistant.Namespace(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		var p agent.Part
		if err := chunk.Decode(&p); err != nil {
			t.Fatal(err)
		}
		all = append(all, frame{Index: chunk.Index, Part: p, Raw: string(chunk.Data)})
	}
	return all
}

// checkFrom fails unless got is exactly want from index from on.
func checkFrom(t *testing.T, who string, got, want []frame, from int64) {
	t.Helper()
	expect := want[min(from, int64(len(want))):]
	if len(got) != len(expect) {
		t.Fatalf("%s from %d: %d parts, want %d", who, from, len(got), len(expect))
	}
	for i, f := range got {
		if f.Index != expect[i].Index || f.Raw != expect[i].Raw {
			t.Fatalf("%s from %d: part %d is #%d %s, want #%d %s", who, from, i, f.Index, f.Raw, expect[i].Index, expect[i].Raw)
		}
	}
}

func partsOf(fs []frame) []agent.Part {
	ps := make([]agent.Part, len(fs))
	for i, f := range fs {
		ps[i] = f.Part
	}
	return ps
}

// A reconnect to a finished turn reads the run twice: to check it is one
// of the handler's, and for the status the response ends with. The handle
// it streams from is made without another read.
func TestReconnectReadsTheRunOnceToCheckIt(t *testing.T) {
	w := readcount.New()
	c, srv := serve(t, w)
	_, release := script(agenttest.Answer(words(3)))
	release()
	first := request(t, "POST", srv.URL+"/chat", chat.ContentTypeNDJSON, userTurn("hi"))
	runID := first.Header.Get(chat.RunIDHeader)
	frames(t, first)
	fullStream(t, c, runID)
	w.Reads()
	again := request(t, "GET", srv.URL+"/chat/"+runID+"/stream", chat.ContentTypeNDJSON, "")
	if _, end := frames(t, again); end.End != string(workflow.StatusCompleted) {
		t.Fatalf("end %+v", end)
	}
	if n := w.Reads(); n != 2 {
		t.Errorf("the reconnect read the run %d times, want 2", n)
	}
}
