package viewer_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/viewer"
)

var sealedView = workflow.Define("viewer.sealed", func(_ workflow.Context, s string) (string, error) { return s, nil })

// TestSealedRunNeedsTheKey: the viewer shows a sealed run's payloads only
// with its key, and otherwise says why.
func TestSealedRunNeedsTheKey(t *testing.T) {
	w := newWorld(t)
	kr, err := codec.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{3}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	chain := codec.New(codec.Options{Keys: kr})
	run, err := workflow.Start(t.Context(), workflow.NewClient(w, workflow.WithPayloadCodec(chain)), sealedView, "iban-DE89-3704")
	if err != nil {
		t.Fatal(err)
	}
	page := func(opts ...viewer.Option) string {
		srv := httptest.NewServer(viewer.New(w, opts...))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/api/run?id=" + run.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := page(viewer.WithPayloadCodec(chain)); !strings.Contains(got, "iban-DE89-3704") || strings.Contains(got, "unreadable") {
		t.Fatalf("with the key: %s", got)
	}
	got := page()
	if strings.Contains(got, "DE89") || !strings.Contains(got, "(encrypted)") || !strings.Contains(got, "payload is encrypted; no key for run "+run.ID) {
		t.Fatalf("without the key: %s", got)
	}
}
