package otel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	otelapi "go.opentelemetry.io/otel"

	"github.com/lambdaworkflow/workflow/otel"
)

func TestEnabledReadsTheOTLPEndpoint(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SDK_DISABLED"} {
			t.Setenv(v, tc.env[v])
		}
		if got := otel.Enabled(); got != tc.want {
			t.Errorf("Enabled() with %v = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// Setup exports spans and metrics over OTLP/HTTP to the endpoint the
// environment names, as the Lambda functions do: a collector sees both by
// the time shutdown returns.
func TestSetupExportsToTheEnvironmentsEndpoint(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "setup-test")
	if !otel.Enabled() {
		t.Fatal("Enabled() is false with an endpoint set")
	}
	shutdown, err := otel.Setup(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, span := otelapi.Tracer("setup-test").Start(t.Context(), "exported")
	span.End()
	counter, _ := otelapi.Meter("setup-test").Int64Counter("setup.test")
	counter.Add(t.Context(), 1)
	if err := shutdown(context.WithoutCancel(t.Context())); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got["/v1/traces"] == 0 || got["/v1/metrics"] == 0 {
		t.Fatalf("the collector got %v; want spans on /v1/traces and metrics on /v1/metrics", got)
	}
}
