// Package telemetry benchmarks what OpenTelemetry costs a run: nothing
// with no providers installed (the engine then calls the API's no-ops),
// and what the SDK costs with package otel's providers installed. A
// package of its own because the API's global providers cannot be
// uninstalled: once a benchmark installs them, every later one in the
// process is traced.
//
//	go -C bench test -run '^$' -bench . -benchmem ./telemetry/
package telemetry

import (
	"context"
	"io"
	"log/slog"
	"syscall"
	"testing"

	otelapi "go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/otel"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// steps is how many inline steps a benchmarked run takes.
const steps = 20

var increment = workflow.DefineStep("telemetry.increment", func(ctx context.Context, n int) (int, error) {
	return n + 1, nil
})

// count calls increment the given number of times, one step after the
// other.
var count = workflow.Define("telemetry.count", func(ctx workflow.Context, times int) (int, error) {
	n := 0
	for range times {
		var err error
		if n, err = increment.Call(ctx, n); err != nil {
			return 0, err
		}
	}
	return n, nil
})

// installed is set once the SDK's providers are the global ones: from
// then on, nothing in this process runs with telemetry off.
var installed struct {
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

// BenchmarkRunTelemetryOff runs 20-step runs on the memory World with no
// OpenTelemetry providers installed, as every program that does not ask
// for telemetry runs. It must run before BenchmarkRunTelemetryOn in the
// process (go test runs benchmarks in the order of the source, each
// -count times).
func BenchmarkRunTelemetryOff(b *testing.B) {
	if installed.spans != nil {
		b.Skip("the SDK's providers were installed earlier in this process and cannot be removed: run this benchmark first (-bench 'Telemetry/' or -bench TelemetryOff)")
	}
	benchmarkRuns(b)
}

// BenchmarkRunTelemetryOn runs the same with package otel's providers
// installed: an SDK tracer provider batching every span to an in-memory
// exporter, and an SDK meter provider aggregating every measurement
// (what otel.Setup installs, with in-memory exporters for the OTLP ones).
func BenchmarkRunTelemetryOn(b *testing.B) {
	if installed.spans == nil {
		installed.spans = tracetest.NewInMemoryExporter()
		installed.reader = sdkmetric.NewManualReader()
		otel.Install(sdktrace.NewTracerProvider(sdktrace.WithBatcher(installed.spans)), sdkmetric.NewMeterProvider(sdkmetric.WithReader(installed.reader)))
	}
	benchmarkRuns(b)
	if err := otel.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	if len(installed.spans.GetSpans()) < steps {
		b.Fatalf("%d spans exported: the benchmark ran untraced", len(installed.spans.GetSpans()))
	}
	installed.spans.Reset()
}

// benchmarkRuns starts a run of steps inline steps under a request's span
// per iteration, drives it to its end in this goroutine (Worker.Process,
// as the Lambda adapter does for each queue message) and reads its
// result: what a run costs, without a queue's wake-up latency in ns/op.
// The start's queue message is left unread.
func benchmarkRuns(b *testing.B) {
	ctx := b.Context()
	w := memory.New()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	c := workflow.NewClient(w)
	tracer := otelapi.Tracer("bench")
	b.ReportAllocs()
	cpu := processCPU(b)
	for b.Loop() {
		reqCtx, request := tracer.Start(ctx, "request")
		run, err := workflow.Start(reqCtx, c, count, steps)
		request.End()
		if err != nil {
			b.Fatal(err)
		}
		if err := worker.Process(ctx, run.ID); err != nil {
			b.Fatal(err)
		}
		if n, err := run.Result(ctx); err != nil || n != steps {
			b.Fatalf("run: %d, %v; want %d", n, err, steps)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process has used, user and system, in
// nanoseconds. On a loaded machine a run's wall time is mostly its
// goroutines waiting for a core; its CPU time moves much less.
func processCPU(b *testing.B) int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
