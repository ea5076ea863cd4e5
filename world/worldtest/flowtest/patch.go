package flowtest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// patchedDeploys holds, by hook token, the runs whose code is "deployed"
// with the patches: a scenario flips it while its run waits on the hook,
// as a deploy replaces the code between a run's invocations.
var patchedDeploys sync.Map

// patchedAround asks Patched before and after waiting on a hook, once its
// run's code has the patches.
var patchedAround = workflow.Define("flowtest.patched", func(ctx workflow.Context, token string) (string, error) {
	deployed := func() bool { _, ok := patchedDeploys.Load(token); return ok }
	before := deployed() && workflow.Patched(ctx, "before-hook")
	if _, err := workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx); err != nil {
		return "", err
	}
	after := deployed() && workflow.Patched(ctx, "after-hook")
	return answer(before) + "/" + answer(after), nil
})

func answer(patched bool) string {
	if patched {
		return "new"
	}
	return "old"
}

// patchAcrossADeploy: a run that waited on a hook when the patches were
// deployed keeps the old branch before the hook and takes the new one
// after it, with the marker of that one only in its log; a run started on
// the new code takes both.
func patchAcrossADeploy(t *testing.T, e *env) {
	old := unique("patch-old")
	run := start(t, e, patchedAround, old)
	waitForHook(t, e, old)
	patchedDeploys.Store(old, true)
	if err := workflow.ResumeHook(e.ctx, e.client, old, "go"); err != nil {
		t.Fatal(err)
	}
	if out := result(t, e, run); out != "old/new" {
		t.Errorf("the run in flight returned %q, want old/new", out)
	}
	if got := patchMarkers(t, e, run.ID); got != "after-hook" {
		t.Errorf("its log records patches %q, want after-hook", got)
	}

	fresh := unique("patch-new")
	patchedDeploys.Store(fresh, true)
	run = start(t, e, patchedAround, fresh)
	waitForHook(t, e, fresh)
	if err := workflow.ResumeHook(e.ctx, e.client, fresh, "go"); err != nil {
		t.Fatal(err)
	}
	if out := result(t, e, run); out != "new/new" {
		t.Errorf("a new run returned %q, want new/new", out)
	}
	if got := patchMarkers(t, e, run.ID); got != "before-hook,after-hook" {
		t.Errorf("its log records patches %q, want before-hook,after-hook", got)
	}
}

func patchMarkers(t *testing.T, e *env, runID string) string {
	t.Helper()
	events, err := e.world.Events(e.ctx, runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range events {
		if ev.Type != world.PatchMarker {
			continue
		}
		var p struct{ Patch string }
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.Patch)
	}
	return strings.Join(ids, ",")
}
