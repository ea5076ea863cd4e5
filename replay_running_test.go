package workflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
)

func TestReplayRunningFindsTheRunsANewVersionBreaks(t *testing.T) {
	deployed(t, 1)
	env := workflowtest.New(t)
	sleeping := workflowtest.Start(env, patchShipping, "o1")
	done := workflowtest.Start(env, shipPlain, "o2")
	if _, err := done.Result(); err != nil {
		t.Fatal(err)
	}
	env.RunUntilIdle()
	gate := func(registry *workflow.Registry) workflow.ReplayReport {
		t.Helper()
		report, err := workflow.ReplayRunning(context.Background(), env.World, registry)
		if err != nil {
			t.Fatal(err)
		}
		if report.Replayed != 1 {
			t.Errorf("replayed %d runs, want the one in flight", report.Replayed)
		}
		return report
	}

	deployed(t, 2) // the fraud check behind Patched: safe
	if r := gate(nil); len(r.Failures) != 0 {
		t.Errorf("the patched code fails runs in flight: %+v", r.Failures)
	}

	deployed(t, 4) // the fraud check for every run: breaks the sleeping one
	r := gate(nil)
	if len(r.Failures) != 1 || r.Failures[0].RunID != sleeping.ID || r.Failures[0].Workflow != patchShipping.Name() {
		t.Fatalf("failures %+v, want the sleeping run", r.Failures)
	}
	nd, ok := errors.AsType[*workflow.NondeterminismError](r.Failures[0].Err)
	if !ok {
		t.Fatalf("failure %v, want a NondeterminismError", r.Failures[0].Err)
	}
	if want := slotOf(t, sleeping.Events(), world.WaitCreated, "2"); nd.Slot != want ||
		!strings.Contains(nd.Found, `step "test.patch.fraud" at patch_test.go:`) {
		t.Errorf("the failure does not name the slot (want %d) and the call made, with its line: %v", want, nd)
	}
	var out strings.Builder
	if _, err := r.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "FAIL "+sleeping.ID+" (workflow test.patch.shipping): nondeterministic workflow") ||
		!strings.Contains(out.String(), "1 of 1 runs in flight would fail") {
		t.Errorf("report:\n%s", out.String())
	}

	// A build whose registry lacks the workflow would leave the run stuck.
	r = gate(workflow.NewRegistry(shipPlain))
	if len(r.Failures) != 1 || !errors.Is(r.Failures[0].Err, workflow.ErrUnknownWorkflow) {
		t.Errorf("failures %+v, want the run's workflow missing", r.Failures)
	}
}
