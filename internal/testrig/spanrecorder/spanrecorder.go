// Package spanrecorder records the spans a test's code starts, on the
// OpenTelemetry API alone. The modules a user requires keep the
// OpenTelemetry SDK out of their graph (it lives in module
// github.com/lambdaworkflow/workflow/otel), so their tests cannot install
// the SDK's in-memory recorder; this is the small part of it they read:
// names, kinds, parents, events, status.
package spanrecorder

import (
	"context"
	"crypto/rand"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Recorder is a tracer provider whose spans are always sampled and kept
// once ended. Install it with otel.SetTracerProvider.
type Recorder struct {
	embedded.TracerProvider
	mu    sync.Mutex
	ended []*Span
}

// Tracer returns a tracer whose spans r records.
func (r *Recorder) Tracer(string, ...trace.TracerOption) trace.Tracer { return tracer{r: r} }

// Ended returns the spans ended so far, in the order they ended.
func (r *Recorder) Ended() []*Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Span(nil), r.ended...)
}

type tracer struct {
	embedded.Tracer
	r *Recorder
}

// Start starts a span under the span in ctx (local, or remote as a
// propagator extracted it), or a new trace's root.
func (t tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	parent := trace.SpanContextFromContext(ctx)
	if cfg.NewRoot() {
		parent = trace.SpanContext{}
	}
	traceID := parent.TraceID()
	if !parent.IsValid() {
		rand.Read(traceID[:])
	}
	var spanID trace.SpanID
	rand.Read(spanID[:])
	s := &Span{
		r:      t.r,
		name:   name,
		kind:   cfg.SpanKind(),
		parent: parent,
		sc:     trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}),
		attrs:  cfg.Attributes(),
	}
	return trace.ContextWithSpan(ctx, s), s
}

// Event is an event added to a span.
type Event struct {
	Name       string
	Attributes []attribute.KeyValue
}

// Span is a recorded span.
type Span struct {
	embedded.Span
	r      *Recorder
	kind   trace.SpanKind
	parent trace.SpanContext
	sc     trace.SpanContext

	mu         sync.Mutex
	name       string
	attrs      []attribute.KeyValue
	events     []Event
	statusCode codes.Code
	statusDesc string
	ended      bool
}

// Name returns the span's name.
func (s *Span) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// Kind returns the span's kind.
func (s *Span) Kind() trace.SpanKind { return s.kind }

// Parent returns the span context of the span's parent; invalid for a root.
func (s *Span) Parent() trace.SpanContext { return s.parent }

// Attributes returns the attributes set on the span, in order.
func (s *Span) Attributes() []attribute.KeyValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]attribute.KeyValue(nil), s.attrs...)
}

// Events returns the events added to the span, in order.
func (s *Span) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Status returns the span's status code and description.
func (s *Span) Status() (codes.Code, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusCode, s.statusDesc
}

// End ends the span and records it, once.
func (s *Span) End(...trace.SpanEndOption) {
	s.mu.Lock()
	ended := s.ended
	s.ended = true
	s.mu.Unlock()
	if ended {
		return
	}
	s.r.mu.Lock()
	s.r.ended = append(s.r.ended, s)
	s.r.mu.Unlock()
}

// AddEvent adds an event with the options' attributes.
func (s *Span) AddEvent(name string, opts ...trace.EventOption) {
	cfg := trace.NewEventConfig(opts...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, Event{Name: name, Attributes: cfg.Attributes()})
}

// RecordError adds the "exception" event the SDK adds, with the error's
// message.
func (s *Span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	s.AddEvent("exception", append(opts, trace.WithAttributes(attribute.String("exception.message", err.Error())))...)
}

// SetStatus sets the span's status.
func (s *Span) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statusCode, s.statusDesc = code, description
}

// SetName renames the span.
func (s *Span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = name
}

// SetAttributes adds attributes to the span.
func (s *Span) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs = append(s.attrs, kv...)
}

// AddLink is accepted and not recorded: no test reads links.
func (s *Span) AddLink(trace.Link) {}

// IsRecording reports whether the span has yet to end.
func (s *Span) IsRecording() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.ended
}

// SpanContext returns the span's own span context.
func (s *Span) SpanContext() trace.SpanContext { return s.sc }

// TracerProvider returns the recorder that made the span.
func (s *Span) TracerProvider() trace.TracerProvider { return s.r }
