package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

func TestInspectAndCancel(t *testing.T) {
	dir := t.TempDir()
	w, err := local.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range []world.Run{
		{ID: "run-a", Workflow: "checkout", Status: world.StatusRunning, Attributes: map[string]string{"customer": "42"}},
		{ID: "run-b", Workflow: "refund", Status: world.StatusRunning},
	} {
		if _, err := w.CreateRun(ctx, r, []world.Event{{Type: world.RunCreated, Payload: []byte(`{"workflow":"` + r.Workflow + `"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()

	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append(args, "--dir", dir), &out)
		return out.String(), err
	}
	out, err := cli("inspect", "runs", "--attr", "customer=42")
	if err != nil || !strings.Contains(out, "run-a") || strings.Contains(out, "run-b") {
		t.Fatalf("filtered listing:\n%s%v", out, err)
	}
	if _, err := cli("cancel", "run-a", "--reason", "customer asked"); err != nil {
		t.Fatal(err)
	}
	out, err = cli("inspect", "run", "run-a")
	if err != nil || !strings.Contains(out, "status    cancelled") || !strings.Contains(out, "run_cancelled") || !strings.Contains(out, "customer asked") {
		t.Fatalf("after cancel:\n%s%v", out, err)
	}
	out, _ = cli("inspect", "runs", "--status", "cancelled")
	if !strings.Contains(out, "run-a") || strings.Contains(out, "run-b") {
		t.Fatalf("status filter:\n%s", out)
	}
	if _, err := cli("inspect", "run"); !errors.Is(err, errUsage) {
		t.Fatalf("missing run ID: %v", err)
	}
	if _, err := cli("cancel", "run-a"); err == nil {
		t.Fatal("cancelling a finished run succeeded")
	}
}
