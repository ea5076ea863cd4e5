package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// The gate on every World the CLI opens: an order waiting for its
// approval (a log the example's own tests keep) replays on the example's
// code; the same order recorded by code that priced it with another
// step, and a run of a workflow the binary lacks, fail, and so does the
// command.
func TestReplayGate(t *testing.T) {
	recorded, err := os.ReadFile("../../examples/lambdaapp/testdata/order-awaiting-approval.json")
	if err != nil {
		t.Fatal(err)
	}
	var events []world.Event
	if err := json.Unmarshal(recorded, &events); err != nil {
		t.Fatal(err)
	}
	drifted := slices.Clone(events)
	drifted[2].Payload = bytes.Replace(drifted[2].Payload, []byte(`"lambdaapp.price"`), []byte(`"lambdaapp.quote"`), 1)
	for name, open := range openWorlds(t) {
		t.Run(name, func(t *testing.T) {
			tw := open(t)
			create := func(id string, events []world.Event) {
				t.Helper()
				var created struct{ Workflow string }
				if err := json.Unmarshal(events[0].Payload, &created); err != nil {
					t.Fatal(err)
				}
				copied := make([]world.Event, len(events))
				for i, ev := range events {
					ev.RunID = id
					copied[i] = ev
				}
				if _, err := tw.CreateRun(t.Context(), world.Run{ID: id, Workflow: created.Workflow, Status: world.StatusRunning}, copied); err != nil {
					t.Fatal(err)
				}
			}
			create("order-in-flight", events)
			if out, err := cliOn(t.Context(), tw, "", "replay"); err != nil || !strings.Contains(out, "ok: all 1 runs in flight replay") {
				t.Fatalf("the example's own run:\n%s%v", out, err)
			}

			create("order-drifted", drifted)
			create("other-workflow", []world.Event{{Slot: 1, Type: world.RunCreated, Payload: []byte(`{"workflow":"billing.invoice"}`)}})
			out, err := cliOn(t.Context(), tw, "", "replay")
			if err == nil || !strings.Contains(err.Error(), "2 runs in flight would fail") {
				t.Errorf("the gate passed, or failed for another reason: %v", err)
			}
			for _, want := range []string{
				`FAIL order-drifted (workflow lambdaapp.order): nondeterministic workflow: run order-drifted, event 3: the log records step "lambdaapp.quote" as call #1, but the workflow called step "lambdaapp.price" at order.go:`,
				`FAIL other-workflow (workflow billing.invoice): workflow: unknown workflow "billing.invoice"`,
				"2 of 3 runs in flight would fail",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
