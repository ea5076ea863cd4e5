// Package crashproc builds the crashtest worker and runs it as real
// processes a test can SIGKILL, over one data directory and journal.
package crashproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Worker is the built crashtest command and the files its processes share.
type Worker struct {
	bin, Data, journal string
	// Env is added to each process's environment.
	Env []string
}

// Build builds internal/testrig/crashtest from the module at root (a relative
// path from the test's package) into the test's temporary directory.
func Build(t *testing.T, root string) *Worker {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and kills a real process")
	}
	tmp := t.TempDir()
	w := &Worker{bin: filepath.Join(tmp, "crashtest"), Data: filepath.Join(tmp, "data"), journal: filepath.Join(tmp, "journal")}
	build := exec.Command("go", "build", "-o", w.bin, "./internal/testrig/crashtest")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the worker: %v\n%s", err, out)
	}
	return w
}

// Serve starts a worker process with the given flags; it is killed when
// the test ends if it still runs.
func (w *Worker) Serve(t *testing.T, flags ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(w.bin, append([]string{"-dir", w.Data, "-journal", w.journal}, flags...)...)
	cmd.Env = append(os.Environ(), w.Env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// Journal is every step attempt the processes journaled so far, a line
// each: "start RUN NAME", "done RUN NAME".
func (w *Worker) Journal() string { b, _ := os.ReadFile(w.journal); return string(b) }

// WaitFor waits until the journal holds line, or fails the test.
func (w *Worker) WaitFor(t *testing.T, line string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !strings.Contains(w.Journal(), line); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("journal never showed %q:\n%s", line, w.Journal())
		}
	}
}
