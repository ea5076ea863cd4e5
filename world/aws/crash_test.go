package aws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/emulator"
	"github.com/lambdaworkflow/workflow/internal/faultproxy"
	"github.com/lambdaworkflow/workflow/world"
)

// crashCase is a worker process (internal/awscrash) serving runs of a
// five-step workflow on resources of its own, behind a fault proxy of its
// own. The test reads the World directly, past the proxy.
type crashCase struct {
	world   *World
	proxy   *faultproxy.Proxy
	bin     string
	effects string // the steps' side effects, one line per attempt
	runs    int
}

// buildAWSCrash builds the worker process once for the test.
func buildAWSCrash(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "awscrash")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/lambdaworkflow/workflow/internal/awscrash").CombinedOutput()
	if err != nil {
		t.Fatalf("building the worker: %v\n%s", err, out)
	}
	return bin
}

func newCrashCase(t *testing.T, bin string, runs int) *crashCase {
	t.Helper()
	p, err := faultproxy.Start(t.Context(), emulator.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return &crashCase{world: newTestWorld(t), proxy: p, bin: bin, effects: filepath.Join(t.TempDir(), "effects"), runs: runs}
}

// workerExit is how a worker process ended.
type workerExit struct {
	killed bool // by the proxy's kill
	err    error
	stderr string
}

// serve runs one worker process until it exits, or kills it when ctx ends.
// With kill set, the proxy SIGKILLs it right after its kill.n-th write.
func (c *crashCase) serve(ctx context.Context, kill *killPoint) workerExit {
	cmd := exec.CommandContext(ctx, c.bin, "-effects", c.effects, "-runs", fmt.Sprint(c.runs))
	cmd.Env = append(os.Environ(),
		"AWS_ENDPOINT_URL="+c.proxy.URL(), "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"WORKFLOW_TABLE="+c.world.opts.Table, "WORKFLOW_QUEUE_URL="+c.world.opts.QueueURL, "WORKFLOW_BUCKET="+c.world.opts.Bucket)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var mu sync.Mutex // held until cmd.Process is set
	var killed bool
	mu.Lock()
	if kill != nil {
		c.proxy.KillAfter(kill.n, kill.when, func() {
			mu.Lock()
			defer mu.Unlock()
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
		})
	}
	err := cmd.Start()
	mu.Unlock()
	if err == nil {
		err = cmd.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	return workerExit{killed: killed, err: err, stderr: stderr.String()}
}

// killPoint is where a worker dies: right after its nth write, before or
// after the answer reaches it.
type killPoint struct {
	n    int
	when faultproxy.When
}

func (k killPoint) String() string { return fmt.Sprintf("write %d, %s", k.n, k.when) }

// runIDs are the IDs awscrash gives its runs.
func (c *crashCase) runIDs() []string {
	ids := make([]string, c.runs)
	for i := range ids {
		ids[i] = fmt.Sprintf("five-%d", i)
	}
	return ids
}

// recordedSteps returns, per run, the steps whose completion is in the log.
func (c *crashCase) recordedSteps(t *testing.T) map[string]map[string]bool {
	t.Helper()
	recorded := map[string]map[string]bool{}
	for _, id := range c.runIDs() {
		recorded[id] = map[string]bool{}
		evs, err := c.world.Events(context.Background(), id, 0)
		if errors.Is(err, world.ErrRunNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == world.StepCompleted {
				recorded[id][ev.CorrelationID] = true
			}
		}
	}
	return recorded
}

// attempts counts the effects file's lines per run and step.
func (c *crashCase) attempts(t *testing.T) map[string]map[string]int {
	t.Helper()
	b, err := os.ReadFile(c.effects)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := map[string]map[string]int{}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("effects: torn line %q", line)
		}
		if n[f[0]] == nil {
			n[f[0]] = map[string]int{}
		}
		n[f[0]][f[1]]++
	}
	return n
}

// checkFinished checks every run: completed with the right result, each
// step completed once in the log and one terminal event; in the effects,
// every step recorded before a crash ran exactly once, and no other more
// than twice (the attempt the crash interrupted and the one that
// completed).
func (c *crashCase) checkFinished(t *testing.T, recordedBeforeCrash map[string]map[string]bool) {
	t.Helper()
	attempts := c.attempts(t)
	for _, id := range c.runIDs() {
		run, err := c.world.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var sum int
		if run.Status != world.StatusCompleted || json.Unmarshal(run.Output, &sum) != nil || sum != 1+4+9+16+25 {
			t.Errorf("run %s: %s, output %s", id, run.Status, run.Output)
		}
		evs, err := c.world.Events(context.Background(), id, 0)
		if err != nil {
			t.Fatal(err)
		}
		completions, terminal := map[string]int{}, 0
		for _, ev := range evs {
			switch ev.Type {
			case world.StepCompleted:
				completions[ev.CorrelationID]++
			case world.RunCompleted, world.RunFailed, world.RunCancelled:
				terminal++
			}
		}
		if len(completions) != 5 || terminal != 1 {
			t.Errorf("run %s: %d steps completed, %d terminal events", id, len(completions), terminal)
		}
		for step, n := range completions {
			if n != 1 {
				t.Errorf("run %s: step %s completed %d times in the log", id, step, n)
			}
			ran := attempts[id][step]
			switch {
			case recordedBeforeCrash[id][step] && ran != 1:
				t.Errorf("run %s: step %s ran %d times; its completion was recorded before the crash", id, step, ran)
			case ran < 1 || ran > 2:
				t.Errorf("run %s: step %s ran %d times", id, step, ran)
			}
		}
	}
}

// TestCleanRunWrites counts the write calls of a worker process that
// starts and serves one run of the five-step workflow through the fault
// proxy, and checks the run and its side effects.
func TestCleanRunWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker process")
	}
	emulatorConfig(t)
	c := newCrashCase(t, buildAWSCrash(t), 1)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if exit := c.serve(ctx, nil); exit.err != nil {
		t.Fatalf("clean run: %v\n%s", exit.err, exit.stderr)
	}
	c.checkFinished(t, c.recordedSteps(t))
	writes := c.proxy.Writes()
	if len(writes) == 0 {
		t.Fatal("no writes counted")
	}
	t.Logf("a clean run makes %d writes: %v", len(writes), writes)
}
