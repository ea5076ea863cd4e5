package webhook_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	otelapi "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/internal/testrig/spanrecorder"
)

// A call of a manual webhook is one server span under the caller's (its
// traceparent header), and under it the hook resume, the wait for the
// reply and the reply's streaming. (Installing the recorder traces the tests
// that run after this one too; nothing of theirs depends on it.)
func TestWebhookCallIsTraced(t *testing.T) {
	spans := installed()
	from := len(spans.Ended())
	streamGate = make(chan struct{})
	close(streamGate)
	f := setup(t)
	run, url := f.start(t, hookSpec{Mode: "manual", Calls: 1})

	callerCtx, caller := new(spanrecorder.Recorder).Tracer("caller").Start(f.ctx, "POST /hook")
	req, err := http.NewRequestWithContext(callerCtx, http.MethodPost, url, strings.NewReader("hi"))
	if err != nil {
		t.Fatal(err)
	}
	otelapi.GetTextMapPropagator().Inject(callerCtx, propagation.HeaderCarrier(req.Header))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	caller.End()
	if _, err := run.Result(f.ctx); err != nil {
		t.Fatal(err)
	}
	// The request's span ends after its response has gone: wait for it.
	var byName map[string]*spanrecorder.Span
	for deadline := time.Now().Add(time.Minute); byName["workflow.webhook.request"] == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no request span among %d spans", len(spans.Ended())-from)
		}
		byName = map[string]*spanrecorder.Span{}
		for _, s := range spans.Ended()[from:] {
			byName[s.Name()] = s
		}
	}
	request := byName["workflow.webhook.request"]
	if request.Kind() != trace.SpanKindServer || request.Parent().SpanID() != caller.SpanContext().SpanID() {
		t.Fatalf("the request's span is a %v span under %v; want a server span under the caller's %v", request.Kind(), request.Parent().SpanID(), caller.SpanContext().SpanID())
	}
	for _, name := range []string{"workflow.hook.resume", "workflow.reply.await", "workflow.reply.stream"} {
		if s := byName[name]; s == nil || s.Parent().SpanID() != request.SpanContext().SpanID() {
			t.Errorf("span %s: %v, want one under the request's span", name, s)
		}
	}
}

// installed installs a span recorder as the global tracer provider, with
// the W3C trace-context propagator, once per process: the API's global
// provider takes the first one installed for good, so a test run again
// (-count) reads the same recorder, from where it began.
var installed = sync.OnceValue(func() *spanrecorder.Recorder {
	spans := new(spanrecorder.Recorder)
	otelapi.SetTracerProvider(spans)
	otelapi.SetTextMapPropagator(propagation.TraceContext{})
	return spans
})
