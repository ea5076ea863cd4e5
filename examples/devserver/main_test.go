package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/local"
)

// An order goes through the dev server's routes, on the embedded World.
func TestDevServerServesAnOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := local.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	srv := httptest.NewServer(newMux(w, "tok"))
	defer srv.Close()
	go workflow.NewWorker(w, workflow.WorkerOptions{WebhookBaseURL: srv.URL}).Run(ctx)

	call := func(method, url, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := call("POST", srv.URL+"/orders", `{"id": "d1", "items": [{"sku": "x", "quantity": 1, "unitCents": 5}]}`); code != http.StatusAccepted {
		t.Fatalf("POST /orders: %d %s", code, body)
	}
	var st struct{ Status, Webhook string }
	for st.Webhook == "" {
		_, body := call("GET", srv.URL+"/orders/d1", "")
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("GET /orders/d1: %s", body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.HasPrefix(st.Webhook, srv.URL+workflow.WebhookPath) {
		t.Fatalf("webhook URL %q is not on the server", st.Webhook)
	}
	if code, body := call("POST", st.Webhook, `{"accept": true, "name": "Ada"}`); code != http.StatusOK || !strings.Contains(body, "awaiting approval") {
		t.Fatalf("webhook: %d %s", code, body)
	}
	if code, body := call("POST", srv.URL+"/orders/d1/approval", `{"approve": true, "approver": "Grace"}`); code != http.StatusOK || !strings.Contains(body, `"status":"approved"`) {
		t.Fatalf("approval: %d %s", code, body)
	}
	if code, body := call("GET", srv.URL+"/runs/api/runs", ""); code != http.StatusOK || strings.Count(body, `"workflow":`) != 1 {
		t.Fatalf("the run viewer's list on /runs/: %d %s", code, body)
	}
	if code, body := call("GET", srv.URL+"/runs/", ""); code != http.StatusOK || !strings.Contains(body, "viewer.js") {
		t.Fatalf("the run viewer on /runs/: %d %s", code, body)
	}
	if code, _ := call("GET", srv.URL+"/orders/d1/nope", ""); code != http.StatusNotFound {
		t.Fatalf("unknown route: %d", code)
	}
}

// The flight-booking chat is on /flight/: a session starts, takes a
// message, and the approvals route knows no call it is not waiting on.
func TestDevServerServesTheFlightChat(t *testing.T) {
	w, err := local.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	srv := httptest.NewServer(newMux(w, "tok"))
	defer srv.Close()
	post := func(path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post("/flight/sessions", `{"messages":[]}`)
	var started struct{ SessionID string }
	if err := json.Unmarshal([]byte(body), &started); code != http.StatusCreated || err != nil || started.SessionID == "" {
		t.Fatalf("POST /flight/sessions: %d %s", code, body)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	if code, body := post("/flight/sessions/"+started.SessionID+"/messages", `{"text":"a flight to JFK, please"}`); code != http.StatusAccepted {
		t.Fatalf("POST a message: %d %s", code, body)
	}
	if code, body := post("/flight/approvals/call-nope", `{"approved":true}`); code != http.StatusNotFound {
		t.Fatalf("an approval no call waits for: %d %s", code, body)
	}
}
