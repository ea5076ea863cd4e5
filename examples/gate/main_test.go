package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	awsrig "github.com/lambdaworkflow/workflow/internal/testrig/awsworld"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
	"github.com/lambdaworkflow/workflow/world/local"
)

// The gate on the embedded and the AWS World: an order waiting for its
// approval (a log the example's own tests keep) replays on the example's
// code; the same order recorded by code that priced it with another
// step, and a run of a workflow the binary lacks, fail.
func TestGate(t *testing.T) {
	recorded, err := os.ReadFile("../lambdaapp/testdata/order-awaiting-approval.json")
	if err != nil {
		t.Fatal(err)
	}
	var events []world.Event
	if err := json.Unmarshal(recorded, &events); err != nil {
		t.Fatal(err)
	}
	drifted := slices.Clone(events)
	drifted[2].Payload = bytes.Replace(drifted[2].Payload, []byte(`"lambdaapp.price"`), []byte(`"lambdaapp.quote"`), 1)
	for name, open := range map[string]func(t *testing.T) world.World{"local": openLocal, "aws": openAWS} {
		t.Run(name, func(t *testing.T) {
			w := open(t)
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
				if _, err := w.CreateRun(t.Context(), world.Run{ID: id, Workflow: created.Workflow, Status: world.StatusRunning}, copied); err != nil {
					t.Fatal(err)
				}
			}
			var out strings.Builder
			create("order-in-flight", events)
			if failures, err := gate(t.Context(), w, &out); err != nil || failures != 0 || !strings.Contains(out.String(), "ok: all 1 runs in flight replay") {
				t.Fatalf("the example's own run: %d failures, %v\n%s", failures, err, &out)
			}

			create("order-drifted", drifted)
			create("other-workflow", []world.Event{{Slot: 1, Type: world.RunCreated, Payload: []byte(`{"workflow":"billing.invoice"}`)}})
			out.Reset()
			if failures, err := gate(t.Context(), w, &out); err != nil || failures != 2 {
				t.Errorf("the gate found %d failures (%v), want 2", failures, err)
			}
			for _, want := range []string{
				`FAIL order-drifted (workflow lambdaapp.order): nondeterministic workflow: run order-drifted, event 3: the log records step "lambdaapp.quote" as call #1, but the workflow called step "lambdaapp.price" at order.go:`,
				`FAIL other-workflow (workflow billing.invoice): workflow: unknown workflow "billing.invoice"`,
				"2 of 3 runs in flight would fail",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the report lacks %q:\n%s", want, &out)
				}
			}
		})
	}
}

func openLocal(t *testing.T) world.World {
	w, err := local.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// openAWS bootstraps an AWS World of the test's own on the emulator.
func openAWS(t *testing.T) world.World {
	w, _, _ := awsrig.New(t, "wf-gate-", awsworld.Names{})
	return w
}
