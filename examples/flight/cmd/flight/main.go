// Command flight books a flight in a chat session, over HTTP, on the
// embedded World: the traveller's message starts the session, the
// agent's answer streams back as it is written, the booking waits for
// the traveller's approval (sent to the approvals route), and a day's
// price watch sleeps in between.
//
//	go -C examples run ./flight/cmd/flight -watch 2s   # make flight
//
// Without -watch the price watch sleeps the day the story says; the run
// survives the program: run it again with the same -dir to go on.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/world/local"
)

func main() {
	dir := flag.String("dir", "", "where the embedded World keeps its data (default: a new temporary directory)")
	watch := flag.Duration("watch", flight.PriceWatch, "how long the price watch sleeps")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *dir == "" {
		d, err := os.MkdirTemp("", "flight-")
		if err != nil {
			log.Fatal(err)
		}
		*dir = d
	}
	if err := run(ctx, *dir, *watch, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run serves the booking agent on 127.0.0.1 and talks to it as a
// traveller's browser would.
func run(ctx context.Context, dir string, watch time.Duration, out io.Writer) error {
	flight.PriceWatch = watch
	w, err := local.Open(dir)
	if err != nil {
		return err
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(ctx)
	worked := make(chan error, 1)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	go func() { worked <- workflow.NewWorker(w, workflow.WorkerOptions{Logger: quiet}).Run(ctx) }()
	defer func() { cancel(); <-worked }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: flight.Handler(workflow.NewClient(w)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	t := &traveller{base: "http://" + ln.Addr().String(), out: out, atLineStart: true}
	fmt.Fprintf(out, "World in %s, API on %s, price watch %v\n\n", dir, t.base, watch)

	const ask = "Book me SFO to JFK on Dec 24 under $400, for Ana Lima."
	t.line("traveller: " + ask)
	resp, err := t.post("/flight/sessions", chat.Turn{Messages: []agent.Message{agent.UserMessage(ask)}})
	if err != nil {
		return err
	}
	session := resp.Header.Get(chat.RunIDHeader)
	if err := t.follow(resp); err != nil {
		return err
	}
	resp, err = t.post("/flight/sessions/"+session+"/messages", chat.Message{End: true})
	if err != nil {
		return err
	}
	if err := t.follow(resp); err != nil {
		return err
	}
	t.line("session " + session + " ended")
	return nil
}

// traveller is the client side: what a browser does with the routes.
type traveller struct {
	base        string
	out         io.Writer
	atLineStart bool
}

// line prints s on a line of its own.
func (t *traveller) line(s string) {
	if !t.atLineStart {
		fmt.Fprintln(t.out)
	}
	fmt.Fprintln(t.out, s)
	t.atLineStart = true
}

// inline prints text where the line is.
func (t *traveller) inline(s string) {
	if s != "" {
		fmt.Fprint(t.out, s)
		t.atLineStart = strings.HasSuffix(s, "\n")
	}
}

func (t *traveller) post(path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest("POST", t.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", chat.ContentTypeNDJSON)
	resp, err := http.DefaultClient.Do(req)
	if err == nil && resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("POST %s: %s %s", path, resp.Status, msg)
	}
	return resp, err
}

// follow shows a streamed response until its end, approving the booking
// when the agent asks for it.
func (t *traveller) follow(resp *http.Response) error {
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var line struct {
			Part  agent.Part
			End   string
			Error string
		}
		if err := dec.Decode(&line); err != nil {
			return fmt.Errorf("the stream broke off: %w", err)
		}
		switch {
		case line.Error != "":
			return errors.New(line.Error)
		case line.End != "":
			t.line("(" + line.End + ")")
			return nil
		}
		if text, inline := flight.Describe(line.Part); inline {
			t.inline(text)
		} else {
			t.line(text)
		}
		if p := line.Part; p.Type == agent.PartToolCall && p.NeedsApproval {
			t.line("traveller: approves " + p.ToolCall.Name)
			r, err := t.post("/flight/approvals/"+p.ToolCall.ID, agent.Approval{Approved: true, Comment: "yes, book it"})
			if err != nil {
				return err
			}
			r.Body.Close()
		}
	}
}
