package workflow_test

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/testrig/crashtest/crashproc"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

// TestKillNineAndRestart kills a real worker process with SIGKILL while one
// run is between steps of a long chain and another sleeps, then starts a new
// process on the same data: both runs finish, no step whose result was
// recorded runs again, and the sleeper wakes when its timer is due.
func TestKillNineAndRestart(t *testing.T) {
	proc := crashproc.Build(t, ".")

	first := proc.Serve(t, "-start", "-sleep", "3s")
	proc.WaitFor(t, "done sleeper 2-c", 20*time.Second)
	proc.WaitFor(t, "done stepper step-04", 20*time.Second)
	time.Sleep(60 * time.Millisecond) // step_completed commits right after "done"
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	beforeKill := proc.Journal()

	second := proc.Serve(t)
	proc.WaitFor(t, "done sleeper 5-e", 30*time.Second)
	proc.WaitFor(t, "done stepper step-19", 30*time.Second)
	after := proc.Journal()

	// A step that reported done well before the kill had its result
	// recorded: it must have started exactly once in all.
	for _, line := range strings.Split(beforeKill, "\n") {
		name, ok := strings.CutPrefix(line, "done ")
		if !ok || strings.HasSuffix(beforeKill, line+"\n") {
			continue // the last line may have raced the kill
		}
		if n := strings.Count(after, "start "+name+"\n"); n != 1 {
			t.Errorf("step %q started %d times; its result was recorded before the kill", name, n)
		}
	}

	// Read the runs beside the worker (it alone serves the queue).
	w, err := local.Open(proc.Data)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	for _, id := range []string{"sleeper", "stepper"} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			r, err := w.GetRun(ctx, id)
			if err == nil && r.Status == world.StatusCompleted {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s: %v %v", id, r.Status, err)
			}
		}
	}
	_ = second.Process.Kill()
	evs, _ := w.Events(ctx, "sleeper", 0)
	var resumeAt, woke time.Time
	for _, ev := range evs {
		switch ev.Type {
		case world.WaitCreated:
			var p struct{ ResumeAt time.Time }
			_ = json.Unmarshal(ev.Payload, &p)
			resumeAt = p.ResumeAt
		case world.WaitCompleted:
			woke = ev.CreatedAt
		}
	}
	if woke.Before(resumeAt) || woke.After(resumeAt.Add(2*time.Second)) {
		t.Fatalf("the sleeper was due at %s and woke at %s", resumeAt.Format(time.StampMilli), woke.Format(time.StampMilli))
	}
}
