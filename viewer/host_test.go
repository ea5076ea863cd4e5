package viewer_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lambdaworkflow/workflow/viewer"
	"github.com/lambdaworkflow/workflow/world"
)

// TestRefusesAHostItWasNotGiven is DNS rebinding: a page on evil.example
// points its name at 127.0.0.1 and reads the viewer from the operator's
// browser, which sends Host: evil.example.
func TestRefusesAHostItWasNotGiven(t *testing.T) {
	w := newWorld(t)
	srv := httptest.NewServer(viewer.New(w, viewer.WithCancel(), viewer.WithAllowedHosts("Ops.Example.com.")))
	defer srv.Close()
	get := func(host string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/runs", nil)
		req.Host = host
		return status(t, req)
	}
	for _, host := range []string{"evil.example", "evil.example:80", "localhost.evil.example", "127.0.0.1.evil.example"} {
		if got := get(host); got != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: %d, want 421", host, got)
		}
	}
	for _, host := range []string{"localhost", "LOCALHOST:8081", "127.0.0.1:9", "[::1]:8081", "::1", "ops.example.com", "ops.example.com:443"} {
		if got := get(host); got != http.StatusOK {
			t.Errorf("Host %q: %d, want 200", host, got)
		}
	}

	cancel := cancelRequest(srv, "run-a", "same-origin")
	cancel.Host = "evil.example"
	if got := status(t, cancel); got != http.StatusMisdirectedRequest {
		t.Fatalf("a cancel with Host evil.example: %d, want 421", got)
	}
	if r, _ := w.GetRun(t.Context(), "run-a"); r.Status != world.StatusRunning {
		t.Fatalf("a refused cancel changed the run: %s", r.Status)
	}
}
