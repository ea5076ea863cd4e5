package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// With no OpenTelemetry provider installed (no test of this package
// installs one), the telemetry of an invocation, its steps and a run's
// start allocates nothing: off is free, not a dozen allocations a step
// for the API's no-ops to drop.
func TestTelemetryOffAllocatesNothing(t *testing.T) {
	if tracing() {
		t.Fatal("tracing is on in a process that installed no tracer provider")
	}
	ctx := context.Background()
	inv := &invocation{ctx: ctx, run: world.Run{ID: "run-1", Workflow: "checkout"}}
	op := &Op{Kind: OpStep, Name: "charge"}
	failed := errors.New("declined")
	allocs := testing.AllocsPerRun(100, func() {
		start, span := startRunSpan(ctx, NewRun{ID: "run-1", Workflow: "checkout"})
		_ = traceParent(start)
		EndSpan(span, nil)
		inv.startInvocationSpan(ctx, nil)
		inv.countResume()
		stepCtx, step := inv.startStepSpan(inv.traced(), op, 1)
		inv.endStepSpan(stepResult{op: op, attempt: 1, err: failed, span: step}, "retrying")
		_ = stepCtx
		inv.countEnd(world.RunCompleted)
		inv.endInvocationSpan(nil)
		RecordQueueLag(ctx, world.Message{RunID: "run-1"}, inv.began, inv.began)
	})
	if allocs != 0 {
		t.Errorf("telemetry off: %v allocations a run of one step, want 0", allocs)
	}
}

// BenchmarkStepTelemetryOff is what a step's telemetry costs with no
// provider installed: the span of its attempt, and its counters and
// histogram, as launch and recordStepResult call them.
func BenchmarkStepTelemetryOff(b *testing.B) {
	inv := &invocation{ctx: context.Background(), run: world.Run{ID: "run-1", Workflow: "checkout"}}
	inv.startInvocationSpan(inv.ctx, nil)
	op := &Op{Kind: OpStep, Name: "charge"}
	b.ReportAllocs()
	for b.Loop() {
		_, span := inv.startStepSpan(inv.traced(), op, 1)
		inv.endStepSpan(stepResult{op: op, attempt: 1, span: span}, "completed")
	}
}
