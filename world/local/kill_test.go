package local_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

// killDirEnv tells a re-executed test binary to act as the writer that
// TestSurvivesKill kills.
const killDirEnv = "LOCAL_TEST_KILL_DIR"

// TestSurvivesKill kills a process in the middle of appending: every
// append it reported done is in the log when the directory is opened again.
func TestSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillWriter$")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	check(t, "StdoutPipe", err)
	check(t, "start the writer", cmd.Start())

	var done int64
	lines := bufio.NewScanner(out)
	for done < 200 && lines.Scan() {
		if n, err := strconv.ParseInt(lines.Text(), 10, 64); err == nil {
			done = n
		}
	}
	check(t, "kill the writer", cmd.Process.Kill())
	_ = cmd.Wait() // killed: its exit status is an error
	if done < 200 {
		t.Fatalf("the writer reported only %d appends before it stopped", done)
	}

	w := open(t, dir)
	evs, err := w.Events(t.Context(), "run", 0)
	check(t, "Events", err)
	if int64(len(evs)) < done {
		t.Fatalf("after kill -9 the log has %d events; the writer had reported %d appended", len(evs), done)
	}
}

// TestKillWriter appends to a run and prints each slot it has appended,
// until it is killed; it stops by itself if nobody does.
func TestKillWriter(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("run by TestSurvivesKill")
	}
	w, err := local.Open(dir)
	check(t, "Open", err)
	ctx := t.Context()
	_, err = w.CreateRun(ctx, world.Run{ID: "run", Workflow: "wf", Status: world.StatusRunning}, nil)
	check(t, "CreateRun", err)
	deadline := time.Now().Add(30 * time.Second)
	for slot := int64(1); time.Now().Before(deadline); slot++ {
		_, err := w.AppendEvents(ctx, "run", slot, []world.Event{{Type: world.StepCreated}}, nil)
		check(t, "AppendEvents", err)
		fmt.Println(slot)
	}
}
