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
	// The same run as logged before runs were pinned to their deployment:
	// whatever code is deployed next drives it.
	unpinned := sleeping.Events()
	for i := range unpinned {
		unpinned[i].RunID = "unpinned"
		if unpinned[i].Type == world.RunStarted {
			unpinned[i].Payload = nil
		}
	}
	if _, err := env.World.CreateRun(context.Background(), world.Run{ID: "unpinned", Workflow: patchShipping.Name(), Status: world.StatusRunning}, unpinned); err != nil {
		t.Fatal(err)
	}
	gate := func(registry *workflow.Registry) workflow.ReplayReport {
		t.Helper()
		report, err := workflow.ReplayRunning(context.Background(), env.World, registry)
		if err != nil {
			t.Fatal(err)
		}
		if report.Replayed != 2 {
			t.Errorf("replayed %d runs, want the two in flight", report.Replayed)
		}
		return report
	}

	deployed(t, 2) // the fraud check behind Patched: safe
	if r := gate(nil); len(r.Failures)+len(r.Pinned) != 0 {
		t.Errorf("the patched code fails runs in flight: %+v", r)
	}

	deployed(t, 4) // the fraud check for every run: breaks both
	r := gate(nil)
	if len(r.Failures) != 1 || r.Failures[0].RunID != "unpinned" || r.Failures[0].Workflow != patchShipping.Name() {
		t.Fatalf("failures %+v, want the unpinned run", r.Failures)
	}
	if len(r.Pinned) != 1 || r.Pinned[0].RunID != sleeping.ID || r.Pinned[0].Deployment == "" {
		t.Fatalf("pinned %+v, want the sleeping run, which stays with its deployment", r.Pinned)
	}
	nd, ok := errors.AsType[*workflow.NondeterminismError](r.Failures[0].Err)
	if !ok {
		t.Fatalf("failure %v, want a NondeterminismError", r.Failures[0].Err)
	}
	if want := slotOf(t, unpinned, world.WaitCreated, "2"); nd.Slot != want ||
		!strings.Contains(nd.Found, `step "test.patch.fraud" at patch_test.go:`) {
		t.Errorf("the failure does not name the slot (want %d) and the call made, with its line: %v", want, nd)
	}
	var out strings.Builder
	if _, err := r.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FAIL unpinned (workflow test.patch.shipping): nondeterministic workflow",
		"KEEP deployment " + r.Pinned[0].Deployment + ": " + sleeping.ID + " (workflow test.patch.shipping) is pinned to it",
		"1 of 2 runs in flight would fail",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}

	// A build whose registry lacks the workflow would leave the run stuck.
	r = gate(workflow.NewRegistry(shipPlain))
	if len(r.Failures) != 1 || !errors.Is(r.Failures[0].Err, workflow.ErrUnknownWorkflow) {
		t.Errorf("failures %+v, want the run's workflow missing", r.Failures)
	}
}
