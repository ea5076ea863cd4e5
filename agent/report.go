package agent

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow"
)

// ReportedErrorEvent is the span event ReportError adds, beside the
// span's exception event.
const ReportedErrorEvent = "agent.error.reported"

// ReportOption configures ReportError.
type ReportOption func(*reportConfig)

type reportConfig struct{ namespace string }

// ReportIn sets the run stream namespace the report goes to (default
// [DefaultNamespace]; an agent's is [Agent.Namespace]).
func ReportIn(namespace string) ReportOption {
	return func(c *reportConfig) { c.namespace = namespace }
}

// ReportError records err, an error the caller handled and went on from
// (a fallback instead of a failed lookup), as reportError does: on the
// current span, the step attempt's when tracing is on, as an exception
// event and a [ReportedErrorEvent] event, leaving the span's status
// alone; and, in a step, on the run's stream as an error part marked
// Handled. It changes nothing else: it returns nothing, a failure to
// record is dropped, and without a tracer provider or outside a step it
// records only what it can. Do not report an error you return: the step
// records that one itself.
func ReportError(ctx context.Context, err error, opts ...ReportOption) {
	if err == nil {
		return
	}
	report(ctx, fmt.Sprintf("%T", err), err.Error(), opts)
}

// ReportWorkflowError is ReportError from workflow code: a step records
// the report once, and replays do not repeat it.
func ReportWorkflowError(ctx workflow.Context, err error, opts ...ReportOption) {
	if err == nil {
		return
	}
	c := reportOptions(opts)
	_, _ = reportStep.Call(ctx, reportInput{Type: fmt.Sprintf("%T", err), Message: err.Error(), Namespace: c.namespace})
}

type reportInput struct {
	Type, Message, Namespace string
}

var reportStep = workflow.DefineStep("agent.report-error", func(ctx context.Context, in reportInput) (struct{}, error) {
	report(ctx, in.Type, in.Message, []ReportOption{ReportIn(in.Namespace)})
	return struct{}{}, nil
})

func reportOptions(opts []ReportOption) reportConfig {
	c := reportConfig{namespace: DefaultNamespace}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func report(ctx context.Context, typ, message string, opts []ReportOption) {
	c := reportOptions(opts)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := trace.WithAttributes(attribute.String("exception.type", typ), attribute.String("exception.message", message), attribute.Bool("agent.error.handled", true))
		span.AddEvent("exception", attrs)
		span.AddEvent(ReportedErrorEvent, attrs)
	}
	info, ok := workflow.GetStepInfo(ctx)
	if !ok {
		return
	}
	if w, err := workflow.Writer[Part](ctx, c.namespace); err == nil {
		_ = w.Write(Part{Type: PartError, Call: info.StepID, Error: message, Handled: true})
	}
}
