package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var helpdesk = chat.NewSession(agent.New("example.helpdesk", agenttest.New(
	agenttest.Answer("Hello! How can I help?"),
	agenttest.Answer("Your flight leaves at 9."),
)))

// A multi-turn session over HTTP: POST /sessions starts it and streams
// the first turn, each POST /sessions/{id}/messages streams the turn
// that answers it, GET /sessions/{id}/stream reconnects from a cursor.
func ExampleSession_Handler() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	w := memory.New()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	c := workflow.NewClient(w)
	mux := http.NewServeMux()
	mux.Handle("/sessions/", helpdesk.Handler(c, "/sessions"))
	mux.Handle("/sessions", helpdesk.Handler(c, "/sessions"))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(path, body string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", chat.ContentTypeNDJSON)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	show := func(resp *http.Response) {
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var line struct {
				Index int64
				Part  agent.Part
				End   string
			}
			if dec.Decode(&line) != nil {
				return
			}
			switch {
			case line.End != "":
				fmt.Println("end:", line.End)
			case line.Part.Type == agent.PartMessage:
				fmt.Printf("%d %s: %s\n", line.Index, line.Part.From, line.Part.Text)
			case line.Part.Type == agent.PartTextDelta:
				fmt.Printf("%d %q\n", line.Index, line.Part.Text)
			}
		}
	}
	resp := post("/sessions", `{"messages":[{"role":"user","text":"hi"}]}`)
	id := resp.Header.Get(chat.RunIDHeader)
	show(resp)
	show(post("/sessions/"+id+"/messages", `{"from":"ana","text":"when do I fly?"}`))
	// Output:
	// 1 "Hello! "
	// 2 "How "
	// 3 "can "
	// 4 "I "
	// 5 "help?"
	// end: running
	// 8 ana: when do I fly?
	// 10 "Your "
	// 11 "flight "
	// 12 "leaves "
	// 13 "at "
	// 14 "9."
	// end: running
}
