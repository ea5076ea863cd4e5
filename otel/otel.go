// Package otel turns on the SDK's OpenTelemetry traces and metrics for a
// program, configured from the standard OTEL_* environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/)
// and exported over OTLP/HTTP. It is the only package of this module that
// imports the OpenTelemetry SDK: the engine speaks to the global providers
// of the OpenTelemetry API, which are no-ops until Setup (or the program
// itself) installs real ones.
//
//	shutdown, err := otel.Setup(ctx)
//	if err != nil { ... }
//	defer shutdown(context.Background())
//
// The Lambda functions call Setup when Enabled: when an OTLP endpoint is
// configured (template.yaml's OtelEndpoint parameter).
package otel

import (
	"context"
	"errors"
	"net/http"
	"os"

	otelapi "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Enabled reports whether the environment asks for telemetry: an OTLP
// endpoint is set and OTEL_SDK_DISABLED is not true.
func Enabled() bool {
	if os.Getenv("OTEL_SDK_DISABLED") == "true" {
		return false
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// Setup installs a tracer provider and a meter provider exporting over
// OTLP/HTTP, and the W3C trace-context propagator, as the global ones.
// Exporters, sampler and resource follow the OTEL_* variables; on Lambda
// the service is named after the function unless OTEL_SERVICE_NAME says
// otherwise. shutdown flushes and stops both providers.
func Setup(ctx context.Context) (shutdown func(context.Context) error, err error) {
	res, err := newResource(ctx)
	if err != nil {
		return nil, err
	}
	spans, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	metrics, err := otlpmetrichttp.New(ctx)
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)), sdkmetric.WithResource(res))
	Install(tp, mp)
	return func(ctx context.Context) error {
		return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
	}, nil
}

// Install makes tp and mp the global providers, with the W3C trace-context
// and baggage propagators. Tests install in-memory ones with it.
func Install(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider) {
	otelapi.SetTracerProvider(tp)
	otelapi.SetMeterProvider(mp)
	otelapi.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
}

// Flush exports what the global providers hold. A Lambda function calls it
// before its invocation returns: Lambda may freeze the process right after.
func Flush(ctx context.Context) error { return engine.FlushTelemetry(ctx) }

func newResource(ctx context.Context) (*resource.Resource, error) {
	var attrs []attribute.KeyValue
	if fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); fn != "" && os.Getenv("OTEL_SERVICE_NAME") == "" {
		attrs = append(attrs, attribute.String("service.name", fn), attribute.String("faas.name", fn))
	}
	// WithFromEnv last: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win.
	return resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithFromEnv())
}

// SetupFromEnv calls Setup if the environment enables telemetry (see
// Enabled) and does nothing otherwise. The providers are never shut down:
// on Lambda, Flush after each invocation exports what they hold.
func SetupFromEnv(ctx context.Context) error {
	if !Enabled() {
		return nil
	}
	_, err := Setup(ctx)
	return err
}

// FlushAfter wraps h to Flush after each request, for a Lambda function
// serving HTTP.
func FlushAfter(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { _ = Flush(context.WithoutCancel(r.Context())) }()
		h.ServeHTTP(w, r)
	})
}
