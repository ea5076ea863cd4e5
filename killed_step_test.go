package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/crashtest/crashproc"
	"github.com/lambdaworkflow/workflow/world/local"
)

// TestKilledStepIsNotRedeliveredForever kills a real worker process in the
// middle of a step, after the attempt's deadline, as Lambda stops an
// invocation at its timeout, again and again. Each restart counts the
// killed attempt as failed under the step's retry policy (three attempts),
// so the run ends, failed with ErrAttemptInterrupted, instead of running
// the step in every new process for ever.
func TestKilledStepIsNotRedeliveredForever(t *testing.T) {
	proc := crashproc.Build(t, ".")
	cmd := proc.Serve(t, "-doomed")
	for attempt := 1; attempt <= 3; attempt++ {
		proc.WaitFor(t, fmt.Sprintf("start endless %d\n", attempt), 30*time.Second)
		time.Sleep(500 * time.Millisecond) // past the attempt's 300 ms deadline
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cmd = proc.Serve(t)
	}
	w, err := local.Open(proc.Data)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := workflow.GetRun[string](ctx, workflow.NewClient(w), "doomed")
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Result(ctx)
	if !errors.Is(err, workflow.ErrAttemptInterrupted) {
		t.Fatalf("the run ended with %v, want ErrAttemptInterrupted", err)
	}
	if n := strings.Count(proc.Journal(), "start endless"); n != 3 {
		t.Fatalf("the step started %d times, want 3 (its retry policy's attempts):\n%s", n, proc.Journal())
	}
	evs, err := w.Events(ctx, "doomed", 0)
	if err != nil {
		t.Fatal(err)
	}
	crashproc.CheckInterruptedAttempts(t, evs, 3)
}
