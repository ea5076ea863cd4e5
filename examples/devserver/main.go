// Command devserver serves the example application (examples/lambdaapp)
// on localhost with no emulator and no AWS account: the flow worker and
// the webhook route run over the embedded World (world/local), and the
// order API through the very handler the API Gateway function runs. It is
// the fastest edit-run loop for the Lambda application:
//
//	go -C examples run ./devserver             # http://127.0.0.1:8080
//	go -C examples run ./devserver -addr :9000 -data /tmp/wf
//
// The run viewer (package viewer) is on /runs/: every order's timeline.
// The flight-booking agent (examples/flight, with its scripted model) is
// on /flight/: chat sessions on /flight/sessions, approvals on
// /flight/approvals (docs/AGENTS.md has the routes).
//
// docs/AWS.md shows the calls to make; they are the same as against the
// deployed stack, with this server's address as the API and webhook base.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/viewer"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	data := flag.String("data", ".workflow-data", "directory of the embedded World")
	token := flag.String("token", envOr("API_BEARER_TOKEN", "local-development-token"), "bearer token the order API requires")
	flag.Parse()
	if err := run(*addr, *data, *token); err != nil {
		log.Fatal(err)
	}
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func run(addr, data, token string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := local.Open(data)
	if err != nil {
		return err
	}
	defer w.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	base := baseURL(ln.Addr().(*net.TCPAddr))

	// No registry: the worker runs every workflow linked in, the example
	// application's and the flight-booking session's.
	worker := workflow.NewWorker(w, workflow.WorkerOptions{WebhookBaseURL: base})
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx) }()
	srv := &http.Server{Handler: newMux(w, token), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Printf("serving examples/lambdaapp on %s (World in %s, API token %q, run viewer on %s/runs/); Ctrl-C stops\n", base, data, token, base)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-done
}

// newMux serves the webhook route, the order API, the flight-booking
// chat under /flight/ and, under /runs/, the run viewer (read-only).
func newMux(w world.World, token string) *http.ServeMux {
	c := workflow.NewClient(w)
	mux := http.NewServeMux()
	mux.Handle("/runs/", http.StripPrefix("/runs", viewer.New(w)))
	mux.Handle(webhook.Pattern, webhook.NewHandler(c))
	mux.Handle("/flight/", flight.Handler(c))
	api := lambdaapp.API(c, token)
	for _, route := range []string{"POST /orders", "GET /orders/{id}", "POST /orders/{id}/approval"} {
		mux.Handle(route, apiGateway(route, api))
	}
	return mux
}

// baseURL is the URL callers use to reach the listener: a wildcard
// address is reached on loopback.
func baseURL(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(a.Port))
}
