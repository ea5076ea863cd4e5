package dynamic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/dynamic"
	"github.com/lambdaworkflow/workflow/internal/testrig/readcount"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var upper = workflow.DefineStep("dyntest.upper", func(ctx context.Context, s string) (string, error) {
	return strings.ToUpper(s), nil
})

// serve returns a client of a fresh memory World and serves it with a
// worker of the given options until the test ends.
func serve(t *testing.T, opts workflow.WorkerOptions) (context.Context, *workflow.Client) {
	t.Helper()
	w := memory.New()
	ctx, stop := context.WithTimeout(t.Context(), 20*time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = workflow.NewWorker(w, opts).Run(ctx)
	}()
	t.Cleanup(func() { stop(); <-done })
	return ctx, workflow.NewClient(w)
}

func enabled() workflow.WorkerOptions { return workflow.WorkerOptions{DynamicWorkflows: true} }

// noWorld is a World every call of which panics: a Start over it that
// returns has called nothing.
type noWorld struct{ world.World }

// named is a step value whose name no DefineStep registered.
type named string

func (n named) Name() string { return string(n) }

func TestStartRefusesBeforeCallingTheWorld(t *testing.T) {
	c := workflow.NewClient(noWorld{})
	steps := dynamic.Steps{"up": upper}
	for _, tc := range []struct {
		name, code string
		steps      dynamic.Steps
		opts       []dynamic.StartOption
		want       string
	}{
		{"off", "def workflow(x):\n    return x\n", steps, nil, "dynamic workflows are off"},
		{"syntax", "def workflow(x):\n    return (\n", steps, nil, "workflow.star:3:1: got outdent"},
		{"undefined name", "def workflow(x):\n    return foo(x)\n", steps, nil, "workflow.star:2:12: undefined: foo"},
		{"unknown alias", "def workflow(x):\n    return steps.down(x)\n", steps, nil, "workflow.star:2:18: steps.down: no step was given under that alias (given: up)"},
		{"load", "load('m', 'f')\ndef workflow(x):\n    return x\n", steps, nil, "workflow.star:1:1: load is not available"},
		{"no workflow", "def flow(x):\n    return x\n", steps, nil, "defines no function workflow(input)"},
		{"two parameters", "def workflow(x, y):\n    return x\n", steps, nil, "workflow.star:1:1: workflow takes at most one parameter"},
		{"alias not an identifier", "def workflow(x):\n    return x\n", dynamic.Steps{"a-b": upper}, nil, `step alias "a-b" is not an identifier`},
		{"unregistered step", "def workflow(x):\n    return x\n", dynamic.Steps{"ghost": named("no.such.step")}, nil, `no step named "no.such.step" is defined in this binary`},
		{"internal step", "def workflow(x):\n    return x\n", dynamic.Steps{"w": named("dynamic.write")}, nil, `no step named "dynamic.write"`},
		{"too large", "def workflow(x):\n    return x\n", steps, []dynamic.StartOption{dynamic.WithMaxSourceBytes(16)}, "the source is 30 bytes; the limit is 16"},
		{"reserved attribute", "def workflow(x):\n    return x\n", steps, []dynamic.StartOption{dynamic.WithAttributes(map[string]string{"$deployment": "x"})}, "reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "off" {
				tc.opts = append(tc.opts, dynamic.WithEnabled(true))
			}
			_, err := dynamic.Start[string](t.Context(), c, tc.code, tc.steps, "in", tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start returned %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestAWorkerThatIsNotEnabledFailsTheRun(t *testing.T) {
	ctx, c := serve(t, workflow.WorkerOptions{})
	run, err := dynamic.Start[string](ctx, c, "def workflow(x):\n    return x\n", nil, "in", dynamic.WithEnabled(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Result(ctx); err == nil || !strings.Contains(err.Error(), "dynamic workflows are off") {
		t.Errorf("the run ended with %v, want it failed for dynamic workflows being off", err)
	}
}

func TestTheEnvironmentTurnsItOn(t *testing.T) {
	t.Setenv("WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS", "True")
	ctx, c := serve(t, workflow.WorkerOptions{})
	run, err := dynamic.Start[string](ctx, c, "def workflow(x):\n    return steps.up(x)\n", dynamic.Steps{"up": upper}, "in")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(ctx); out != "IN" || err != nil {
		t.Errorf("the run returned %q, %v, want IN", out, err)
	}
}

func TestTheStepLimitFailsTheCallPastIt(t *testing.T) {
	ctx, c := serve(t, enabled())
	code := "def workflow(x):\n    for i in range(5):\n        steps.up(x)\n"
	run, err := dynamic.Start[string](ctx, c, code, dynamic.Steps{"up": upper}, "in", dynamic.WithEnabled(true), dynamic.WithMaxSteps(3))
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Result(ctx)
	if err == nil || !strings.Contains(err.Error(), "its 3 step calls, its limit") || !strings.Contains(err.Error(), "workflow.star:3:17") {
		t.Errorf("the run ended with %v, want the step limit at workflow.star:3:17", err)
	}
}

// The execution budget is per stretch between durable calls: a run whose
// whole computation is many times the limit completes if each stretch
// stays under it.
func TestTheExecutionBudgetIsPerDurableCall(t *testing.T) {
	ctx, c := serve(t, enabled())
	code := `
def workflow(x):
    total = 0
    for round in range(10):
        for i in range(5000): # about 30,000 steps
            total += i
        sleep(0)
    return total
`
	run, err := dynamic.Start[int](ctx, c, code, nil, nil, dynamic.WithEnabled(true), dynamic.WithMaxExecutionSteps(100_000))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(ctx); out != 10*4999*5000/2 || err != nil {
		t.Errorf("the run returned %d, %v, want %d", out, err, 10*4999*5000/2)
	}
}

// now, random and uuid give the same values when the run is replayed: the
// values written to the stream before the hook (first execution) are the
// ones the replay after the hook computes again.
func TestDeterministicBindingsReplay(t *testing.T) {
	ctx, c := serve(t, enabled())
	code := `
def workflow(x):
    values = [now(), random(), uuid()]
    write(values)
    hook(token = x).receive()
    return values
`
	run, err := dynamic.Start[[]any](ctx, c, code, nil, "det-1", dynamic.WithEnabled(true))
	if err != nil {
		t.Fatal(err)
	}
	for workflow.ResumeHook(ctx, c, "det-1", true) != nil {
		time.Sleep(5 * time.Millisecond)
	}
	out, err := run.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var written []any
	for v, err := range workflow.ReadStream[[]any](ctx, (*workflow.Run[[]any])(run), "", 0) {
		if err != nil {
			t.Fatal(err)
		}
		written = v
		break
	}
	a, _ := json.Marshal(written)
	b, _ := json.Marshal(out)
	if string(a) != string(b) || len(out) != 3 {
		t.Errorf("first execution wrote %s, the replay returned %s", a, b)
	}
}

func TestAttributes(t *testing.T) {
	ctx, c := serve(t, enabled())
	code := `
def workflow(x):
    set_attributes(stage = "done")
    return steps.up(attributes()["team"])
`
	run, err := dynamic.Start[string](ctx, c, code, dynamic.Steps{"up": upper}, nil, dynamic.WithEnabled(true), dynamic.WithAttributes(map[string]string{"team": "ops"}))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(ctx); out != "OPS" || err != nil {
		t.Errorf("the run returned %q, %v, want OPS", out, err)
	}
	attrs, err := run.Attributes(ctx)
	if err != nil || attrs["stage"] != "done" {
		t.Errorf("the run's attributes are %v (%v), want stage=done", attrs, err)
	}
}

// A log replayed against a stored source that no longer matches it fails
// with an error naming the source line; a stored source that no longer
// matches its hash is refused before it runs.
func TestReplayNamesTheSourceLine(t *testing.T) {
	t.Setenv("WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS", "1") // Replay runs the stored code
	ctx, c := serve(t, enabled())
	code := "def workflow(x):\n    return steps.up(x)\n"
	run, err := dynamic.Start[string](ctx, c, code, dynamic.Steps{"up": upper}, "in")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Result(ctx); err != nil {
		t.Fatal(err)
	}
	events, err := c.World().Events(ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(from, to string) []byte {
		log, _ := json.Marshal(events)
		return []byte(strings.Replace(string(log), from, to, 1))
	}
	if err := workflow.Replay(ctx, edit("", "")); err != nil {
		t.Fatalf("the unchanged log does not replay: %v", err)
	}
	var nondet *workflow.NondeterminismError
	err = workflow.Replay(ctx, edit(`"step":"dyntest.upper"`, `"step":"dyntest.lower"`))
	if !errors.As(err, &nondet) || !strings.Contains(err.Error(), "workflow.star:2:20") {
		t.Errorf("replaying a log that recorded another step returned %v, want a nondeterminism error at workflow.star:2:20", err)
	}
	err = workflow.Replay(ctx, edit("steps.up(x)", "steps.up(x) "))
	if err == nil || !strings.Contains(err.Error(), "not to the") {
		t.Errorf("replaying a stored source changed under its hash returned %v, want the hash refused", err)
	}
}

// Start reads no run, as workflow.Start does: a fresh start is one write;
// a start that finds the run already there reads it once, to check it is
// of this code.
func TestStartReadsNoRun(t *testing.T) {
	w := readcount.New()
	c := workflow.NewClient(w)
	code := "def workflow(x):\n    return x\n"
	start := func() {
		t.Helper()
		if _, err := dynamic.Start[string](t.Context(), c, code, nil, "in", dynamic.WithEnabled(true), dynamic.WithRunID("dyn-reads")); err != nil {
			t.Fatal(err)
		}
	}
	start()
	if n := w.Reads(); n != 0 {
		t.Errorf("a fresh Start read the run %d times, want 0", n)
	}
	start()
	if n := w.Reads(); n != 1 {
		t.Errorf("a Start of an existing run read it %d times, want 1", n)
	}
}
