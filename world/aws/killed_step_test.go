package aws

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/crashtest/crashproc"
)

// TestKilledStepIsNotRedeliveredForever is the AWS World's twin of the
// root package's: a real worker process (internal/testrig/awscrash -doomed) is
// SIGKILLed in the middle of a step that ignores its context, after the
// attempt's deadline, as Lambda stops an invocation at its timeout, three
// times. Each restarted process takes the run once the killed one's lease
// lapses and its message comes back, and counts the killed attempt as
// failed under the step's retry policy (three attempts), so the run ends,
// failed with ErrAttemptInterrupted, and the step is not started again.
func TestKilledStepIsNotRedeliveredForever(t *testing.T) {
	c := newCrashCase(t, buildAWSCrash(t), 1)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	for attempt := 1; attempt <= 3; attempt++ {
		cmd := c.command(ctx, "-doomed")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.waitForAttempts(t, ctx, attempt)
		time.Sleep(500 * time.Millisecond) // past the attempt's 300 ms deadline
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("worker %d: %v, want it killed\n%s", attempt, err, stderr.String())
		}
	}
	// The last process finds the third attempt interrupted, with no
	// retries left, fails the run and exits.
	last := c.command(ctx, "-doomed")
	if out, err := last.CombinedOutput(); err != nil {
		t.Fatalf("the last worker: %v\n%s", err, out)
	}
	t.Logf("three kills and the failed run in %s", time.Since(began).Round(100*time.Millisecond))
	run, err := workflow.GetRun[string](ctx, workflow.NewClient(c.world), "doomed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Result(ctx); !errors.Is(err, workflow.ErrAttemptInterrupted) {
		t.Fatalf("the run ended with %v, want ErrAttemptInterrupted", err)
	}
	if n := c.doomedAttempts(t); n != 3 {
		t.Fatalf("the step started %d times, want 3 (its retry policy's attempts)", n)
	}
	evs, err := c.world.Events(ctx, "doomed", 0)
	if err != nil {
		t.Fatal(err)
	}
	crashproc.CheckInterruptedAttempts(t, evs, 3)
}

// waitForAttempts waits until the doomed step has started n times.
func (c *crashCase) waitForAttempts(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for c.doomedAttempts(t) < n {
		select {
		case <-ctx.Done():
			t.Fatalf("attempt %d of the doomed step never started", n)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *crashCase) doomedAttempts(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(c.effects)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "doomed ")
}
