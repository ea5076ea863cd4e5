package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// gate holds the streaming step between its two chunks until the test has
// received the first one. The test makes a fresh one before it starts its
// worker, so that it can run more than once (-count=N).
var gate chan struct{}

var answer = workflow.DefineStep("webhooktest.answer", func(ctx context.Context, msg workflow.WebhookMessage) (struct{}, error) {
	body := workflow.NewStream(func(yield func([]byte) bool) error {
		if !yield([]byte("first\n")) {
			return nil
		}
		<-gate
		yield([]byte("second:" + string(msg.Data.Body) + "\n"))
		return nil
	})
	header := http.Header{"Content-Type": {"text/plain"}}
	return struct{}{}, msg.RespondWith(ctx, workflow.WebhookResponse{Status: http.StatusCreated, Header: header, Stream: body})
})

var serve = workflow.Define("webhooktest.serve", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
	wh := workflow.CreateWebhook(ctx, workflow.WithManualResponse())
	if err := workflow.SetAttributes(ctx, map[string]string{"url": wh.URL(ctx)}); err != nil {
		return struct{}{}, err
	}
	msg, err := wh.Receive(ctx)
	if err != nil {
		return struct{}{}, err
	}
	return answer.Call(ctx, msg)
})

// The function as Lambda runs it, through lambdaurl: the reply reaches the
// caller chunk by chunk while the step is still writing it. (MiniStack
// buffers a streamed Function URL reply, so only this test can show it.)
func TestFunctionStreamsTheReplyAsTheStepWritesIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	gate = make(chan struct{})
	w := memory.New()
	c := workflow.NewClient(w)
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	run, err := workflow.Start(ctx, c, serve, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	var path string
	for path == "" {
		attrs, err := run.Attributes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		path = attrs["url"] // no base URL: the URL is the path
		time.Sleep(10 * time.Millisecond)
	}

	fn := lambdaurl.Wrap(newHandler(c))
	resp, err := fn(ctx, urlRequest("POST", path, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated || resp.Headers["Content-Type"] != "text/plain" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Headers)
	}
	if got := readWithin(t, resp.Body, len("first\n")); got != "first\n" {
		t.Fatalf("first chunk %q", got)
	}
	close(gate) // only now may the step write the rest
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second:hi\n" {
		t.Fatalf("rest of the body %q, %v", rest, err)
	}
	if _, err := run.Result(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFunctionServesOnlyTheWebhookRoute(t *testing.T) {
	fn := lambdaurl.Wrap(newHandler(workflow.NewClient(memory.New())))
	for _, path := range []string{"/", "/other", workflow.WebhookPath + "hk_unknown"} {
		resp, err := fn(t.Context(), urlRequest("GET", path, ""))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
}

// urlRequest is the event a Function URL sends for an HTTP request.
func urlRequest(method, path, body string) *events.LambdaFunctionURLRequest {
	return &events.LambdaFunctionURLRequest{
		Version: "2.0",
		RawPath: path,
		Headers: map[string]string{"content-type": "text/plain"},
		Body:    body,
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: path},
		},
	}
}

// readWithin reads n bytes, failing the test if they take more than a few
// seconds: a reply held back until the step ends would never arrive.
func readWithin(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		b := make([]byte, n)
		k, _ := io.ReadFull(r, b)
		got <- string(b[:k])
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("the first chunk did not arrive while the step was still writing: the reply is buffered")
		return ""
	}
}
