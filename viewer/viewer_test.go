package viewer_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/viewer"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

func newWorld(t *testing.T) world.World {
	w, err := local.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for _, id := range []string{"run-a", "run-b"} {
		r := world.Run{ID: id, Workflow: "checkout", Status: world.StatusRunning, CreatedAt: time.Now()}
		if _, err := w.CreateRun(t.Context(), r, []world.Event{{Type: world.RunCreated, Payload: []byte(`{"workflow":"checkout"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func cancelRequest(srv *httptest.Server, id, site string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/cancel", strings.NewReader(url.Values{"id": {id}, "reason": {"test"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", site)
	return req
}

func status(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestReadOnlyUnlessCancelIsAllowed(t *testing.T) {
	w := newWorld(t)
	readOnly := httptest.NewServer(viewer.New(w))
	defer readOnly.Close()
	if got := status(t, cancelRequest(readOnly, "run-a", "same-origin")); got != http.StatusForbidden {
		t.Fatalf("cancel on a read-only viewer: %d", got)
	}

	srv := httptest.NewServer(viewer.New(w, viewer.WithCancel()))
	defer srv.Close()
	if got := status(t, cancelRequest(srv, "run-a", "cross-site")); got != http.StatusForbidden {
		t.Fatalf("a cancel sent from another site: %d, want it refused", got)
	}
	if r, _ := w.GetRun(t.Context(), "run-a"); r.Status != world.StatusRunning {
		t.Fatalf("a refused cancel changed the run: %s", r.Status)
	}
	if got := status(t, cancelRequest(srv, "run-a", "same-origin")); got != http.StatusNoContent {
		t.Fatalf("cancel from the viewer's page: %d", got)
	}
	if r, _ := w.GetRun(t.Context(), "run-a"); r.Status != world.StatusCancelled {
		t.Fatalf("after cancel: %s", r.Status)
	}
	if got := status(t, cancelRequest(srv, "run-a", "same-origin")); got != http.StatusConflict {
		t.Fatalf("cancelling a finished run: %d", got)
	}
	if got := status(t, cancelRequest(srv, "no-such-run", "same-origin")); got != http.StatusNotFound {
		t.Fatalf("cancelling an unknown run: %d", got)
	}
}

func TestAPIFiltersAndRefusesBadInput(t *testing.T) {
	w := newWorld(t)
	srv := httptest.NewServer(viewer.New(w))
	defer srv.Close()
	get := func(path string) (int, map[string]json.RawMessage) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]json.RawMessage
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if code, _ := get("/api/runs?status=sleeping"); code != http.StatusBadRequest {
		t.Fatalf("unknown status: %d", code)
	}
	if code, _ := get("/api/runs?attr=novalue"); code != http.StatusBadRequest {
		t.Fatalf("attribute without a value: %d", code)
	}
	if code, _ := get("/api/run?id=nope"); code != http.StatusNotFound {
		t.Fatalf("unknown run: %d", code)
	}
	code, body := get("/api/runs?status=running&workflow=checkout")
	if code != http.StatusOK || strings.Count(string(body["runs"]), `"id"`) != 2 {
		t.Fatalf("filtered list: %d %s", code, body["runs"])
	}
	if code, _ := get("/api/runs?workflow=refund"); code != http.StatusOK {
		t.Fatalf("empty list: %d", code)
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); resp.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("index: %d, CSP %q", resp.StatusCode, csp)
	}
}
