package dynamic_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/local"
)

// A worker process that ran a dynamic run up to its hook is killed with
// SIGKILL; the hook is resumed from another process, and a new worker
// process (dynamic workflows on by the environment only) finishes the run
// from its stored source: the step before the hook ran once, the one
// after once.
func TestKillNineWhileADynamicRunWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real process")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "crashtest")
	build := exec.Command("go", "build", "-o", bin, "./internal/crashtest")
	build.Dir = ".." // the module's root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the worker: %v\n%s", err, out)
	}
	data, journal := filepath.Join(tmp, "data"), filepath.Join(tmp, "journal")
	serve := func(extra ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"-dir", data, "-journal", journal}, extra...)...)
		cmd.Env = append(os.Environ(), "WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS=1")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	journalLines := func() []string { b, _ := os.ReadFile(journal); return strings.Split(string(b), "\n") }

	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened; journal:\n%s", what, strings.Join(journalLines(), "\n"))
			}
		}
	}

	first := serve("-dynamic", "approve:crash")
	waitUntil("the step before the hook", func() bool { return slices.Contains(journalLines(), "done dynamic before-hook") })
	// The hook is claimed in the same invocation, before the run suspends.
	w, err := local.Open(data)
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

	serve()
	run, err := workflow.GetRun[[]string](ctx, client, "dynamic")
	if err != nil {
		t.Fatal(err)
	}
	out, err := run.Result(ctx)
	if err != nil || strings.Join(out, ",") != "before-hook ok,approved,after-hook ok" {
		t.Fatalf("the run returned %q, %v", out, err)
	}
	var starts []string
	for _, line := range journalLines() {
		if strings.HasPrefix(line, "start dynamic ") {
			starts = append(starts, strings.TrimPrefix(line, "start dynamic "))
		}
	}
	if strings.Join(starts, ",") != "before-hook,after-hook" {
		t.Errorf("step attempts across both processes: %v, want each step once", starts)
	}
}
