package otel_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/otel"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var charge = workflow.DefineStep("oteltest.charge", func(ctx context.Context, _ struct{}) (int, error) {
	info, _ := workflow.GetStepInfo(ctx)
	if info.Attempt == 1 {
		return 0, errors.New("gateway timeout")
	}
	return info.Attempt, nil
}, workflow.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))

var order = workflow.Define("oteltest.order", func(ctx workflow.Context, _ struct{}) (string, error) {
	if _, err := charge.Call(ctx, struct{}{}); err != nil {
		return "", err
	}
	workflow.Sleep(ctx, 50*time.Millisecond)
	return workflow.CreateHook[string](ctx, workflow.WithToken("oteltest-"+ctx.RunID())).Receive(ctx)
})

// TestSpanTreeOfARunWithARetryASleepAndAHookResume runs a workflow whose
// step fails once, that sleeps (suspending the run) and waits on a hook,
// with the SDK's in-memory exporters installed, and checks the tree: one
// trace under the span that started the run, an invocation span for each
// time the run was picked up, linked to what woke it, and a span for each
// step attempt with its outcome.
func TestSpanTreeOfARunWithARetryASleepAndAHookResume(t *testing.T) {
	spans, reader := installed()
	before := collect(t, reader)
	spansBefore := len(spans.Ended())

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := memory.New()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{InlineWait: -1}) // every wait suspends
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx) }()
	c := workflow.NewClient(w)

	reqCtx, request := sdktrace.NewTracerProvider().Tracer("test").Start(ctx, "POST /orders")
	run, err := workflow.Start(reqCtx, c, order, struct{}{}, workflow.WithRunID("run-traced"))
	request.End()
	if err != nil {
		t.Fatal(err)
	}
	// Resumed only once the run has suspended on its hook (after the
	// retry's and the sleep's suspensions: every wait suspends): a resume
	// that lands while the invocation that made the hook still holds the
	// run is applied by that invocation, and wakes none.
	for suspended(spans.Ended()[spansBefore:]) < 3 {
		if ctx.Err() != nil {
			t.Fatal("the run never suspended on its hook")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		err := workflow.ResumeHook(ctx, c, "oteltest-run-traced", "approved")
		if err == nil {
			break
		}
		if !errors.Is(err, workflow.ErrHookNotFound) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, err := run.Result(ctx); err != nil || got != "approved" {
		t.Fatalf("result = %q, %v", got, err)
	}
	cancel()
	<-done

	ended := spans.Ended()[spansBefore:]
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	start := only(t, byName, "workflow.start oteltest.order")
	if start.Parent().SpanID() != request.SpanContext().SpanID() {
		t.Errorf("the start span's parent is %v, want the request's span", start.Parent().SpanID())
	}
	var resumed []sdktrace.ReadOnlySpan // the tries before the hook existed failed
	for _, s := range byName["workflow.hook.resume"] {
		if s.Status().Code != codes.Error {
			resumed = append(resumed, s)
		}
	}
	resume := only(t, map[string][]sdktrace.ReadOnlySpan{"resume": resumed}, "resume")
	invocations := byName["workflow.invocation oteltest.order"]
	// Picked up at the start, after the sleep, after the hook resume; a
	// redelivery may add one, never fewer.
	if len(invocations) < 3 {
		t.Fatalf("%d invocation spans, want at least 3: %v", len(invocations), names(ended))
	}
	outcomes := map[string]int{}
	linkedToResume := false
	for _, inv := range invocations {
		if inv.Parent().SpanID() != start.SpanContext().SpanID() || inv.SpanContext().TraceID() != start.SpanContext().TraceID() {
			t.Errorf("invocation span %v is not under the start span", inv.SpanContext().SpanID())
		}
		outcomes[attr(inv, "workflow.outcome")]++
		for _, l := range inv.Links() {
			linkedToResume = linkedToResume || l.SpanContext.SpanID() == resume.SpanContext().SpanID()
		}
	}
	if outcomes["suspended"] < 2 || outcomes["ended"] != 1 {
		t.Errorf("invocation outcomes %v, want at least 2 suspended (sleep, hook) and 1 ended", outcomes)
	}
	if !linkedToResume {
		t.Error("no invocation span links to the hook resume that woke the run")
	}
	attempts := byName["workflow.step oteltest.charge"]
	if len(attempts) != 2 {
		t.Fatalf("%d step spans, want 2 attempts", len(attempts))
	}
	for i, want := range []struct {
		outcome string
		status  codes.Code
	}{{"retrying", codes.Error}, {"completed", codes.Unset}} {
		s := attempts[i]
		if attr(s, "workflow.step.attempt") != fmt.Sprint(i+1) || attr(s, "workflow.outcome") != want.outcome || s.Status().Code != want.status {
			t.Errorf("attempt span %d: attempt %s, outcome %s, status %v; want %s, %v", i+1,
				attr(s, "workflow.step.attempt"), attr(s, "workflow.outcome"), s.Status().Code, want.outcome, want.status)
		}
		if s.SpanContext().TraceID() != start.SpanContext().TraceID() {
			t.Errorf("attempt span %d is in another trace", i+1)
		}
	}

	rm := collect(t, reader)
	for name, want := range map[string]int64{
		"workflow.runs.started": 1, "workflow.runs.finished": 1, "workflow.step.attempts": 2,
		"workflow.step.failures": 1, "workflow.hook.resumes": 1,
	} {
		if got := sum(rm, name) - sum(before, name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	for _, name := range []string{"workflow.runs.resumed", "workflow.replay.events", "workflow.invocation.duration", "workflow.step.duration"} {
		if n := count(rm, name) - count(before, name); n < 2 {
			t.Errorf("%s recorded %d times, want at least 2", name, n)
		}
	}
	// The sleep's wake-up was due at a time: its lag is measured (a
	// message due at once, with no send time, is not).
	if n := count(rm, "workflow.queue.lag") - count(before, "workflow.queue.lag"); n < 1 {
		t.Errorf("workflow.queue.lag recorded %d times, want the sleep's wake-up", n)
	}
}

// installed installs the SDK's providers with in-memory exporters, once
// per process: the API's global providers take the first ones installed
// for good (the engine's tracer and instruments delegate to them), so a
// test run again (-count) reads the same ones, from where it began.
var installed = sync.OnceValues(func() (*tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	otel.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	return spans, reader
})

func collect(t *testing.T, reader *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func only(t *testing.T, byName map[string][]sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	if len(byName[name]) != 1 {
		t.Fatalf("%d spans %q, want 1", len(byName[name]), name)
	}
	return byName[name][0]
}

// suspended counts the ended invocation spans of runs that suspended.
func suspended(spans []sdktrace.ReadOnlySpan) int {
	n := 0
	for _, s := range spans {
		if s.Name() == "workflow.invocation oteltest.order" && attr(s, "workflow.outcome") == "suspended" {
			n++
		}
	}
	return n
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if kv.Key == attribute.Key(key) {
			return kv.Value.String()
		}
	}
	return ""
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// sum adds up a counter's points.
func sum(rm metricdata.ResourceMetrics, name string) int64 {
	var n int64
	for _, m := range metrics(rm, name) {
		if s, ok := m.Data.(metricdata.Sum[int64]); ok {
			for _, p := range s.DataPoints {
				n += p.Value
			}
		}
	}
	return n
}

// count is how many values a histogram, or how much a counter, recorded.
func count(rm metricdata.ResourceMetrics, name string) int64 {
	n := sum(rm, name)
	for _, m := range metrics(rm, name) {
		if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
			for _, p := range h.DataPoints {
				n += int64(p.Count)
			}
		}
	}
	return n
}

func metrics(rm metricdata.ResourceMetrics, name string) []metricdata.Metrics {
	var out []metricdata.Metrics
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				out = append(out, m)
			}
		}
	}
	return out
}
