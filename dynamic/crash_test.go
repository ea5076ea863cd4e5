package dynamic_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/crashtest/crashproc"
	"github.com/lambdaworkflow/workflow/world/local"
)

// A worker process that ran a dynamic run up to its hook is killed with
// SIGKILL; the hook is resumed from another process, and a new worker
// process (dynamic workflows on by the environment only) finishes the run
// from its stored source: the step before the hook ran once, the one
// after once.
func TestKillNineWhileADynamicRunWaits(t *testing.T) {
	proc := crashproc.Build(t, "..")
	proc.Env = []string{"WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS=1"}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened; journal:\n%s", what, proc.Journal())
			}
		}
	}

	first := proc.Serve(t, "-dynamic", "approve:crash")
	proc.WaitFor(t, "done dynamic before-hook\n", 30*time.Second)
	// The hook is claimed in the same invocation, before the run suspends.
	w, err := local.Open(proc.Data)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := workflow.NewClient(w)
	waitUntil("the hook's claim", func() bool { _, err := client.GetHook(ctx, "approve:crash"); return err == nil })
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if err := workflow.ResumeHook(ctx, client, "approve:crash", "approved"); err != nil {
		t.Fatal(err)
	}

	proc.Serve(t)
	run, err := workflow.GetRun[[]string](ctx, client, "dynamic")
	if err != nil {
		t.Fatal(err)
	}
	out, err := run.Result(ctx)
	if err != nil || strings.Join(out, ",") != "before-hook ok,approved,after-hook ok" {
		t.Fatalf("the run returned %q, %v", out, err)
	}
	var starts []string
	for _, line := range strings.Split(proc.Journal(), "\n") {
		if strings.HasPrefix(line, "start dynamic ") {
			starts = append(starts, strings.TrimPrefix(line, "start dynamic "))
		}
	}
	if strings.Join(starts, ",") != "before-hook,after-hook" {
		t.Errorf("step attempts across both processes: %v, want each step once", starts)
	}
}
