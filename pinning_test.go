package workflow_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// codeVersion stands for whatever a deployment changed: each worker below
// replaces it with its own deployment's answer.
var codeVersion = workflow.DefineStep("pin.version", func(context.Context, struct{}) (string, error) { return "v0", nil })

// versioned waits on a hook between two calls of codeVersion, so its run
// is in flight across the "deploy": both answers come from the deployment
// that drives it.
func versioned(ctx workflow.Context, token string) (string, error) {
	before, err := codeVersion.Call(ctx, struct{}{})
	if err != nil {
		return "", err
	}
	if _, err := workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx); err != nil {
		return "", err
	}
	after, err := codeVersion.Call(ctx, struct{}{})
	return before + "/" + after, err
}

var (
	pinnedFlow = workflow.Define("pin.pinned", versioned)
	latestFlow = workflow.Define("pin.latest", versioned, workflow.WithVersionPolicy(workflow.Latest))
)

func deploymentWorker(w world.World, deployment string, reg *workflow.Registry) *workflow.Worker {
	return workflow.NewWorker(w, workflow.WorkerOptions{
		Deployment: deployment,
		Registry:   reg,
		Replace: []workflow.StepReplacement{codeVersion.Replace(func(context.Context, struct{}) (string, error) {
			return deployment, nil
		})},
	})
}

func TestRunsAreDrivenOnlyByTheirDeployment(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) world.World{
		"memory": func(*testing.T) world.World { return memory.New() },
		"local": func(t *testing.T) world.World {
			w, err := local.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return w
		},
	} {
		t.Run(name, func(t *testing.T) { testDeployments(t, open(t)) })
	}
}

func testDeployments(t *testing.T, w world.World) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := workflow.NewClient(w)
	both := workflow.NewRegistry(pinnedFlow, latestFlow)
	d1, d2 := deploymentWorker(w, "d1", both), deploymentWorker(w, "d2", both)

	old, err := workflow.Start(ctx, c, pinnedFlow, "pin:old")
	if err != nil {
		t.Fatal(err)
	}
	moving, err := workflow.Start(ctx, c, latestFlow, "pin:moving")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{old.ID, moving.ID} {
		if err := d1.Process(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	pinned := &workflow.PinnedError{}
	if err := d2.Process(ctx, old.ID); !errors.As(err, &pinned) || pinned.Deployment != "d1" || !errors.Is(err, workflow.ErrPinnedElsewhere) {
		t.Fatalf("deployment d2 processing a run pinned to d1: %v", err)
	}
	if err := d2.Process(ctx, moving.ID); err != nil {
		t.Fatalf("deployment d2 processing a Latest run started on d1: %v", err)
	}
	for deployment, want := range map[string]string{"d1": old.ID, "d2": moving.ID} {
		page, err := c.ListRuns(ctx, workflow.RunFilter{Deployment: deployment})
		if err != nil || len(page.Runs) != 1 || page.Runs[0].ID != want || page.Runs[0].Deployment != deployment {
			t.Fatalf("runs on %s: %+v, %v; want only %s (the Latest run moved on to the deployment that drove it last)", deployment, page.Runs, err, want)
		}
	}

	// "Deploy" d2: new runs are pinned to it while d1 still serves its own.
	fresh, err := workflow.Start(ctx, c, pinnedFlow, "pin:fresh")
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Process(ctx, fresh.ID); err != nil {
		t.Fatal(err)
	}
	serving, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, worker := range []*workflow.Worker{d1, d2} {
		wg.Go(func() { _ = worker.Run(serving) })
	}
	defer func() { stop(); wg.Wait() }()
	for _, token := range []string{"pin:old", "pin:moving", "pin:fresh"} {
		if err := workflow.ResumeHook(ctx, c, token, "go"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := old.Result(ctx); err != nil || got != "d1/d1" {
		t.Errorf("the run started on d1: %q, %v; want d1/d1 (d1's code throughout)", got, err)
	}
	if got, err := fresh.Result(ctx); err != nil || got != "d2/d2" {
		t.Errorf("the run started on d2: %q, %v; want d2/d2", got, err)
	}
	got, err := moving.Result(ctx)
	if err != nil || !strings.HasPrefix(got, "d1/") {
		t.Errorf("the Latest run: %q, %v; want d1/ and either deployment after", got, err)
	}
	if err := d1.Process(ctx, moving.ID); err != nil {
		t.Errorf("a finished Latest run on any deployment: %v", err)
	}

	// A deployment that must start a run whose workflow it lacks fails it.
	stop()
	wg.Wait()
	lacking := deploymentWorker(w, "d3", workflow.NewRegistry(latestFlow))
	orphan, err := workflow.Start(ctx, c, pinnedFlow, "pin:orphan")
	if err != nil {
		t.Fatal(err)
	}
	if err := lacking.Process(ctx, orphan.ID); err != nil {
		t.Fatal(err)
	}
	_, err = orphan.Result(ctx)
	if want := `workflow "pin.pinned" is not registered in deployment d3`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a run of a workflow missing from its deployment: %v, want %q", err, want)
	}
}
