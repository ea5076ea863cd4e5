// Command webhook serves a workflow's webhook over HTTP on 127.0.0.1 and
// prints the curl command that calls it. The webhook is manual (WithManualResponse): a step
// answers the request, and its response streams to curl as server-sent
// events, one event per word, as the step writes them.
//
//	go -C examples run ./webhook
//	# then, in another terminal, the curl command it prints
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world/local"
)

// publishURL tells whoever reads the run's "url" stream where the webhook is.
var publishURL = workflow.DefineStep("webhook.publishURL", func(ctx context.Context, url string) (struct{}, error) {
	w, err := workflow.Writer[string](ctx, "url")
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, w.Write(url)
})

// respond answers the HTTP caller with a stream of server-sent events.
var respond = workflow.DefineStep("webhook.respond", func(ctx context.Context, msg workflow.WebhookMessage) (int, error) {
	words := strings.Fields(string(msg.Data.Body))
	err := msg.RespondWith(ctx, workflow.WebhookResponse{
		Header: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}},
		Body:   []byte(fmt.Sprintf("event: start\ndata: %d words\n\n", len(words))),
		Stream: workflow.NewStream(func(yield func([]byte) bool) error {
			for i, w := range words {
				time.Sleep(300 * time.Millisecond) // work worth streaming
				if !yield([]byte(fmt.Sprintf("data: %d %s\n\n", i+1, strings.ToUpper(w)))) {
					return nil
				}
			}
			return nil
		}),
	})
	return len(words), err
})

// Inbox waits for one call to its webhook and answers it.
var Inbox = workflow.Define("webhook.inbox", func(ctx workflow.Context, _ struct{}) (string, error) {
	hook := workflow.CreateWebhook(ctx, workflow.WithManualResponse())
	if _, err := publishURL.Call(ctx, hook.URL(ctx)); err != nil {
		return "", err
	}
	req, err := hook.Receive(ctx) // no compute while nobody calls
	if err != nil {
		return "", err
	}
	n, err := respond.Call(ctx, req)
	return fmt.Sprintf("answered %s %s (%d words)", req.Data.Method, req.Data.Header.Get("User-Agent"), n), err
})

func main() {
	dir := flag.String("dir", ".workflow-data", "where the embedded World keeps its data")
	port := flag.Int("port", 0, "port to serve on, on 127.0.0.1 (0: any free port)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	w, err := local.Open(*dir)
	if err != nil {
		log.Fatal(err)
	}
	client := workflow.NewClient(w)

	// The webhook route, served on the loopback interface only.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(webhook.Pattern, webhook.NewHandler(client))
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	worked := make(chan error)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{WebhookBaseURL: "http://" + ln.Addr().String()})
	go func() { worked <- worker.Run(ctx) }()
	defer func() { stop(); <-worked; w.Close() }() // let the worker finish before the World closes

	run, err := workflow.Start(ctx, client, Inbox, struct{}{})
	if err != nil {
		log.Fatal(err)
	}
	for chunk, err := range run.Readable(ctx, "url", 0) {
		var url string
		if err == nil {
			err = chunk.Decode(&url)
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("Run %s is waiting for a call to its webhook. Call it:\n\n", run.ID)
		fmt.Printf("  curl -N --data 'durable functions answer over http' %s\n\n", url)
		break
	}
	result, err := run.Result(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result)
}
