package engine

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/world"
)

// instrumentation names the library to OpenTelemetry. The tracer and the
// instruments come from the global providers, no-ops until a program
// installs its own (package otel of this module does). Off, telemetry
// costs a check per call site and no allocation: spans are not started
// while tracing() is false, and measurements are not built for an
// instrument that is not Enabled; the API's no-ops would take the names,
// options and attribute sets built for them and drop them, a dozen
// allocations a step (bench/telemetry measures it).
const instrumentation = "github.com/lambdaworkflow/workflow"

var (
	tracer = otel.Tracer(instrumentation)
	meter  = otel.Meter(instrumentation)

	// W3C trace context, whatever propagator the program installed: it
	// is what the log and queue messages store.
	traceContext = propagation.TraceContext{}

	runsStarted        = counter("workflow.runs.started", "{run}", "Runs started.")
	runsFinished       = counter("workflow.runs.finished", "{run}", "Runs that ended, by status.")
	runsResumed        = counter("workflow.runs.resumed", "{invocation}", "Invocations that picked up a started run.")
	hookResumes        = counter("workflow.hook.resumes", "{message}", "Messages delivered to hooks.")
	stepAttempts       = counter("workflow.step.attempts", "{attempt}", "Step attempts that ended, by outcome.")
	stepFailures       = counter("workflow.step.failures", "{attempt}", "Step attempts that failed (retried or not).")
	stepDuration       = histogram("workflow.step.duration", "s", "How long a step attempt ran.")
	invocationDuration = histogram("workflow.invocation.duration", "s", "How long one invocation drove a run, by how it ended.")
	queueLag           = histogram("workflow.queue.lag", "s", "From when a message was due to when a worker picked it up.")
	replayLength       = histogram("workflow.replay.events", "{event}", "Events an invocation replayed before going live.")
)

// apiTracerProvider is the API's own global tracer provider, which
// delegates to the one a program installs; nil if a provider was installed
// before this package was initialized.
var apiTracerProvider = func() trace.TracerProvider {
	tp := otel.GetTracerProvider()
	if reflect.TypeOf(tp).String() != "*global.tracerProvider" {
		return nil
	}
	return tp
}()

// tracing reports whether a program installed a tracer provider (any,
// even a no-op of its own): until then the engine starts no spans.
func tracing() bool { return otel.GetTracerProvider() != apiTracerProvider }

// noSpan is what a span start returns while tracing is off: a span that
// records nothing and ends nothing.
var noSpan = trace.SpanFromContext(context.Background())

func counter(name, unit, desc string) metric.Int64Counter {
	c, _ := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return c // never nil: on error the API returns a no-op
}

func histogram(name, unit, desc string) metric.Float64Histogram {
	h, _ := meter.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return h
}

// Keys of span and metric attributes.
const (
	attrRunID    = attribute.Key("workflow.run.id")
	attrWorkflow = attribute.Key("workflow.name")
	attrStep     = attribute.Key("workflow.step.name")
	attrAttempt  = attribute.Key("workflow.step.attempt")
	attrOutcome  = attribute.Key("workflow.outcome")
	attrStatus   = attribute.Key("workflow.run.status")
)

// traceParent is the W3C traceparent of the span in ctx, "" if none.
func traceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	return carrier["traceparent"]
}

// WithTraceParent returns ctx carrying a remote span context read from a
// traceparent (a queue message's), or ctx itself if there is none.
func WithTraceParent(ctx context.Context, parent string) context.Context {
	if parent == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": parent})
}

// enqueue queues msg with the trace context of ctx, so that the invocation
// it wakes links to the span that queued it.
func enqueue(ctx context.Context, w world.Queue, msg world.Message) error {
	msg.Trace = traceParent(ctx)
	return w.Enqueue(ctx, msg)
}

// RecordQueueLag records how long a message waited past due before a
// worker picked it up. sent is when it was queued, if known.
func RecordQueueLag(ctx context.Context, msg world.Message, sent, now time.Time) {
	due := msg.DeliverAt
	if due.IsZero() {
		due = sent
	}
	if due.IsZero() || !queueLag.Enabled(ctx) {
		return
	}
	queueLag.Record(ctx, max(now.Sub(due), 0).Seconds())
}

// startInvocationSpan starts the span of one invocation. Its parent is the
// run's own trace context, from the span that started the run (recorded in
// run_created), so that every invocation of a run, over days, is one
// trace under its start; the span that woke this one (a hook resume, the
// invocation that suspended) is linked. A run started without a trace
// gets a trace per invocation, parented on what woke it.
func (inv *invocation) startInvocationSpan(ctx context.Context, events []world.Event) {
	inv.began, inv.outcome = time.Now(), "ended"
	if replayLength.Enabled(ctx) {
		replayLength.Record(ctx, float64(len(events)))
	}
	if !tracing() {
		return
	}
	woke := trace.SpanContextFromContext(ctx)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attrRunID.String(inv.run.ID), attrWorkflow.String(inv.run.Workflow))}
	parent := ctx
	runTrace := inv.created.Trace // a warm invocation's, which replays only a tail
	if len(events) > 0 && events[0].Type == world.RunCreated {
		if p, err := decodePayload[runCreatedPayload](events[0]); err == nil {
			runTrace = p.Trace
		}
	}
	if runTrace != "" {
		parent = WithTraceParent(ctx, runTrace)
		if woke.IsValid() && !woke.Equal(trace.SpanContextFromContext(parent)) {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: woke}))
		}
	}
	_, inv.span = tracer.Start(parent, "workflow.invocation "+inv.run.Workflow, opts...)
	if inv.span.IsRecording() {
		inv.span.SetAttributes(attribute.Int("workflow.replay.events", len(events)))
	}
}

// endInvocationSpan ends the invocation's span and records its duration
// with how it ended: ended, suspended, handoff or error.
func (inv *invocation) endInvocationSpan(err error) {
	outcome := inv.outcome
	if err != nil {
		outcome = "error"
	}
	if inv.span != nil {
		if err != nil {
			inv.span.RecordError(err)
			inv.span.SetStatus(codes.Error, err.Error())
		}
		inv.span.SetAttributes(attrOutcome.String(outcome))
		inv.span.End()
	}
	if invocationDuration.Enabled(inv.ctx) {
		invocationDuration.Record(inv.ctx, time.Since(inv.began).Seconds(),
			metric.WithAttributes(attrWorkflow.String(inv.run.Workflow), attrOutcome.String(outcome)))
	}
}

// traced is the invocation's context with its span, for what it starts:
// step attempts, child runs, queue messages.
func (inv *invocation) traced() context.Context {
	if inv.span == nil {
		return inv.ctx
	}
	return trace.ContextWithSpan(inv.ctx, inv.span)
}

// startStepSpan starts the span of one step attempt, under the
// invocation's; none (a nil span) while tracing is off.
func (inv *invocation) startStepSpan(ctx context.Context, op *Op, attempt int) (context.Context, trace.Span) {
	if inv.span == nil {
		return ctx, nil
	}
	return tracer.Start(trace.ContextWithSpan(ctx, inv.span), "workflow.step "+op.Name, trace.WithAttributes(
		attrRunID.String(inv.run.ID), attrStep.String(op.Name), attrAttempt.Int(attempt)))
}

// endStepSpan ends an attempt's span and counts the attempt by outcome:
// completed, retrying, failed, or abandoned (its result came too late).
func (inv *invocation) endStepSpan(r stepResult, outcome string) {
	if stepAttempts.Enabled(inv.ctx) || stepDuration.Enabled(inv.ctx) || stepFailures.Enabled(inv.ctx) {
		attrs := metric.WithAttributes(attrWorkflow.String(inv.run.Workflow), attrStep.String(r.op.Name), attrOutcome.String(outcome))
		stepAttempts.Add(inv.ctx, 1, attrs)
		stepDuration.Record(inv.ctx, r.took.Seconds(), attrs)
		if r.err != nil {
			stepFailures.Add(inv.ctx, 1, attrs)
		}
	}
	if r.span == nil {
		return
	}
	r.span.SetAttributes(attrOutcome.String(outcome))
	if r.err != nil {
		r.span.RecordError(r.err)
		r.span.SetStatus(codes.Error, r.err.Error())
	}
	r.span.End()
}

// countEnd counts a run's end by status.
func (inv *invocation) countEnd(end world.EventType) {
	if !runsFinished.Enabled(inv.ctx) {
		return
	}
	status := strings.TrimPrefix(string(end), "run_") // completed, failed, cancelled
	runsFinished.Add(inv.ctx, 1, metric.WithAttributes(attrWorkflow.String(inv.run.Workflow), attrStatus.String(status)))
}

// countResume counts an invocation that picked up a started run.
func (inv *invocation) countResume() {
	if runsResumed.Enabled(inv.ctx) {
		runsResumed.Add(inv.ctx, 1, metric.WithAttributes(attrWorkflow.String(inv.run.Workflow)))
	}
}

// startRunSpan starts the span of a run's start, and counts it.
func startRunSpan(ctx context.Context, nr NewRun) (context.Context, trace.Span) {
	if runsStarted.Enabled(ctx) {
		runsStarted.Add(ctx, 1, metric.WithAttributes(attrWorkflow.String(nr.Workflow)))
	}
	if !tracing() {
		return ctx, noSpan
	}
	return StartSpan(ctx, "workflow.start "+nr.Workflow, trace.SpanKindProducer, attrRunID.String(nr.ID), attrWorkflow.String(nr.Workflow))
}

// StartSpan starts a span of the library's own, for the root package
// (run start, hook resume, webhook request, reply streaming); while
// tracing is off, a span that records nothing, and ctx as it is.
func StartSpan(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !tracing() {
		return ctx, noSpan
	}
	return tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// EndSpan ends a span, with err as its status if not nil.
func EndSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// FlushTelemetry asks the global providers, if they buffer (the SDK's
// do), to export what they hold now.
func FlushTelemetry(ctx context.Context) error {
	type flusher interface {
		ForceFlush(context.Context) error
	}
	var errs []error
	if f, ok := otel.GetTracerProvider().(flusher); ok {
		errs = append(errs, f.ForceFlush(ctx))
	}
	if f, ok := otel.GetMeterProvider().(flusher); ok {
		errs = append(errs, f.ForceFlush(ctx))
	}
	return errors.Join(errs...)
}
