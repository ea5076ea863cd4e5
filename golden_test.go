package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
)

// A run's log outlives the code that wrote it: a run in flight during a
// deployment is carried on by the new code, and a finished run's log is
// read by tools. testdata/golden holds logs recorded from the workflows in
// golden_workflows_test.go; every test run replays them against today's
// code and format. A log written today must replay tomorrow.
//
// golden-attributes-dropped-at-end.json was recorded by code that dropped
// attributes set right before the workflow returned, and
// golden-late-child-dropped-at-end.json by code that never started a child
// started right before; they stay to prove such logs replay on the code
// that keeps them.
//
// go test -run TestGoldenLogs -update re-records them. Do that only for a
// new scenario: re-recording an old log hides the very break it guards
// against.

var update = flag.Bool("update", false, "re-record the golden event logs in testdata/golden")

const goldenDir = "testdata/golden"

// goldenStart is the fake clock's start for recordings, so that a
// re-recorded log differs from the old one only where the code changed.
var goldenStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// goldenScenarios record runs; each returns the IDs of the runs to keep.
var goldenScenarios = map[string]func(t *testing.T, env *workflowtest.Env) []string{
	"retry": func(t *testing.T, env *workflowtest.Env) []string {
		return finish(t, workflowtest.Start(env, goldenRetry, "A-1", workflow.WithRunID("golden-retry")))
	},
	"fanout": func(t *testing.T, env *workflowtest.Env) []string {
		return finish(t, workflowtest.Start(env, goldenFanOut, 3, workflow.WithRunID("golden-fanout")))
	},
	"sleep": func(t *testing.T, env *workflowtest.Env) []string {
		return finish(t, workflowtest.Start(env, goldenSleep, struct{}{}, workflow.WithRunID("golden-sleep")))
	},
	"hooks": func(t *testing.T, env *workflowtest.Env) []string {
		run := workflowtest.Start(env, goldenHooks, "H-1", workflow.WithRunID("golden-hooks"))
		env.RunUntilIdle()
		for _, a := range []goldenApproval{{Approver: "ann"}, {Approver: "bob", Approved: true}} {
			if err := goldenApprovals.Resume(context.Background(), env.Client, "golden-approval:H-1", a); err != nil {
				t.Fatal(err)
			}
			env.RunUntilIdle()
		}
		return finish(t, run)
	},
	"responding": func(t *testing.T, env *workflowtest.Env) []string {
		run := workflowtest.Start(env, goldenResponding, "golden-quotes", workflow.WithRunID("golden-responding"))
		env.RunUntilIdle()
		for _, sku := range []string{"tea", "coffee"} {
			var quote goldenQuote
			var err error
			env.While(func() {
				quote, err = goldenQuotes.Resume(context.Background(), env.Client, "golden-quotes", goldenQuery{SKU: sku})
			})
			if err != nil || quote.Price != 10*len(sku) {
				t.Fatalf("quote for %s: %+v, %v", sku, quote, err)
			}
		}
		return finish(t, run)
	},
	"child": func(t *testing.T, env *workflowtest.Env) []string {
		parent := finish(t, workflowtest.Start(env, goldenChild, "c-1", workflow.WithRunID("golden-child")))
		return append(parent, "golden-child-1")
	},
	"late child": func(t *testing.T, env *workflowtest.Env) []string {
		return finish(t, workflowtest.Start(env, goldenLateChild, "l-1", workflow.WithRunID("golden-late-child")))
	},
	"patched": func(t *testing.T, env *workflowtest.Env) []string {
		return finish(t, workflowtest.Start(env, goldenPatched, 7, workflow.WithRunID("golden-patched")))
	},
	"attributes": func(t *testing.T, env *workflowtest.Env) []string {
		return finish(t, workflowtest.Start(env, goldenAttributes, "cust-7", workflow.WithRunID("golden-attributes")))
	},
	"failed": func(t *testing.T, env *workflowtest.Env) []string {
		run := workflowtest.Start(env, goldenFailed, "F-1", workflow.WithRunID("golden-failed"))
		if _, err := run.Result(); !errors.Is(err, workflow.ErrRunFailed) {
			t.Fatalf("run ended with %v, want a failure", err)
		}
		return []string{run.ID}
	},
	"cancelled": func(t *testing.T, env *workflowtest.Env) []string {
		run := workflowtest.Start(env, goldenCancelled, struct{}{}, workflow.WithRunID("golden-cancelled"))
		env.RunUntilIdle()
		if err := run.Cancel(context.Background(), "customer left"); err != nil {
			t.Fatal(err)
		}
		env.RunUntilIdle()
		if s := run.Status(); s != workflow.StatusCancelled {
			t.Fatalf("run is %s, want cancelled", s)
		}
		return []string{run.ID}
	},
	"conflict": func(t *testing.T, env *workflowtest.Env) []string {
		holder := workflowtest.Start(env, goldenDesk, false, workflow.WithRunID("golden-desk-holder"))
		env.RunUntilIdle()
		taker := workflowtest.Start(env, goldenDesk, true, workflow.WithRunID("golden-desk-taker"))
		env.RunUntilIdle()
		refused := workflowtest.Start(env, goldenDesk, false, workflow.WithRunID("golden-desk-refused"))
		env.RunUntilIdle()
		if err := workflow.ResumeHook(context.Background(), env.Client, "golden-desk", "carol"); err != nil {
			t.Fatal(err)
		}
		return slices.Concat(finish(t, holder), finish(t, taker), finish(t, refused))
	},
}

// finish drives a run to its end and fails the test unless it completed.
func finish[O any](t *testing.T, run *workflowtest.Run[O]) []string {
	t.Helper()
	if _, err := run.Result(); err != nil {
		t.Fatalf("run %s: %v\n%s", run.ID, err, run.Timeline())
	}
	return []string{run.ID}
}

func TestGoldenLogs(t *testing.T) {
	if *update {
		recordGoldenLogs(t)
	}
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden logs in %s (%v): record them with -update", goldenDir, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			workflowtest.ReplayFile(t, path)
		})
	}
}

func recordGoldenLogs(t *testing.T) {
	for name, record := range goldenScenarios {
		env := workflowtest.New(t, workflowtest.StartTime(goldenStart))
		for _, id := range record(t, env) {
			workflowtest.SaveLog(t, filepath.Join(goldenDir, id+".json"), env.Events(id))
		}
		t.Logf("recorded scenario %s", name)
	}
}

// The golden logs must hold every kind of event, so that each one's format
// is guarded.
func TestGoldenLogsCoverEveryEventType(t *testing.T) {
	seen := map[world.EventType]bool{}
	for _, path := range must(filepath.Glob(filepath.Join(goldenDir, "*.json"))) {
		for _, ev := range readGolden(t, path) {
			seen[ev.Type] = true
		}
	}
	for _, typ := range []world.EventType{
		world.RunCreated, world.RunStarted, world.RunCompleted, world.RunFailed, world.RunCancelled,
		world.StepCreated, world.StepStarted, world.StepCompleted, world.StepFailed, world.StepRetrying,
		world.WaitCreated, world.WaitCompleted, world.HookCreated, world.HookReceived, world.HookConflict,
		world.HookDisposed, world.ChildCreated, world.ChildCompleted, world.AttributesSet,
		world.PatchMarker,
	} {
		if !seen[typ] {
			t.Errorf("no golden log holds a %s event", typ)
		}
	}
}

func readGolden(t *testing.T, path string) []world.Event {
	t.Helper()
	var events []world.Event
	if err := json.Unmarshal(must(os.ReadFile(path)), &events); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return events
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
