package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

var exportDouble = workflow.DefineStep("cli.double", func(ctx context.Context, n int) (int, error) { return 2 * n, nil })

var exportFlow = workflow.Define("cli.export", func(ctx workflow.Context, n int) (int, error) {
	return exportDouble.Call(ctx, n)
})

var exportOther = workflow.Define("cli.other", func(ctx workflow.Context, n int) (int, error) {
	workflow.Sleep(ctx, 0)
	return n, nil
})

// A run's log printed with --json is what workflow.Replay reads: keep it
// as a test's golden log.
func TestInspectRunJSONReplays(t *testing.T) {
	dir := t.TempDir()
	w, err := local.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	started, err := workflow.Start(ctx, workflow.NewClient(w), exportFlow, 21, workflow.WithRunID("export-1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := workflow.NewWorker(w, workflow.WorkerOptions{}).Process(ctx, started.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := started.Result(ctx); err != nil || n != 42 {
		t.Fatalf("run: %d, %v", n, err)
	}
	w.Close()

	var out bytes.Buffer
	if err := run(ctx, []string{"inspect", "run", "export-1", "--json", "--dir", dir}, &out); err != nil {
		t.Fatal(err)
	}
	var events []world.Event
	if err := json.Unmarshal(out.Bytes(), &events); err != nil {
		t.Fatalf("--json printed what is not a log: %v\n%s", err, out.String())
	}
	if lines := strings.Count(out.String(), "\n"); len(events) < 5 || lines != len(events)+2 {
		t.Fatalf("%d events on %d lines, want one a line:\n%s", len(events), lines, out.String())
	}
	if err := workflow.Replay(ctx, out.Bytes()); err != nil {
		t.Fatalf("replaying the printed log: %v", err)
	}
	drifted := bytes.Replace(out.Bytes(), []byte(`"workflow":"`+exportFlow.Name()+`"`), []byte(`"workflow":"`+exportOther.Name()+`"`), 1)
	if _, ok := errors.AsType[*workflow.NondeterminismError](workflow.Replay(ctx, drifted)); !ok {
		t.Fatal("the printed log replayed against other code without a NondeterminismError")
	}
}
