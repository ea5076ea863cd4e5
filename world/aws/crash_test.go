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

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
	"github.com/lambdaworkflow/workflow/world"
)

// crashCase is a worker process (internal/testrig/awscrash) serving runs of a
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
	out, err := exec.Command("go", "build", "-o", bin, "github.com/lambdaworkflow/workflow/internal/testrig/awscrash").CombinedOutput()
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
	cmd := c.command(ctx, "-runs", fmt.Sprint(c.runs))
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

// command is the worker process with args, on the case's World through
// its proxy, writing its effects to the case's file.
func (c *crashCase) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"-effects", c.effects}, args...)...)
	cmd.Env = append(os.Environ(),
		"AWS_ENDPOINT_URL="+c.proxy.URL(), "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
		"WORKFLOW_TABLE="+c.world.opts.Table, "WORKFLOW_QUEUE_URL="+c.world.opts.QueueURL, "WORKFLOW_BUCKET="+c.world.opts.Bucket)
	// A worker still running when ctx ends is stopped with SIGQUIT, so that
	// the Go runtime prints where each of its goroutines waits.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
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

// checkFinished checks every run (checkLogs) and the side effects: every
// step recorded before a crash ran exactly once, and no other more than
// twice (the attempt the crash interrupted and the one that completed).
func (c *crashCase) checkFinished(t *testing.T, recordedBeforeCrash map[string]map[string]bool) {
	t.Helper()
	c.checkLogs(t)
	for id, steps := range c.attempts(t) {
		for step, ran := range steps {
			switch {
			case recordedBeforeCrash[id][step] && ran != 1:
				t.Errorf("run %s: step %s ran %d times; its completion was recorded before the crash", id, step, ran)
			case ran > 2:
				t.Errorf("run %s: step %s ran %d times", id, step, ran)
			}
		}
	}
}

// checkLogs checks that every run completed with the right result, with
// each of its five steps completed once in its log and one terminal event.
func (c *crashCase) checkLogs(t *testing.T) {
	t.Helper()
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
		}
	}
}

// TestCrashMatrix counts the AWS write calls of a clean run of a worker
// process, then kills the worker (SIGKILL) right after each of those
// writes in turn, once as the answer reaches it and once before, and
// starts it again, as a client retrying its Start would: every run
// completes, and no step whose completion was recorded before the kill
// runs again. The kills after the writes of the start's and the wake-up's
// dedup markers are the crashes between marker and send. The cases run
// side by side, each on resources of its own.
func TestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker process and kills it dozens of times")
	}
	emulatorConfig(t)
	bin := buildAWSCrash(t)
	clean := newCrashCase(t, bin, 1)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if exit := clean.serve(ctx, nil); exit.err != nil {
		t.Fatalf("clean run: %v\n%s", exit.err, exit.stderr)
	}
	clean.checkFinished(t, clean.recordedSteps(t))
	writes := clean.proxy.Writes()
	t.Logf("a clean run makes %d writes: %v", len(writes), writes)

	const sideBySide = 6
	sem := make(chan struct{}, sideBySide)
	var wg sync.WaitGroup
	for n, call := range writes {
		for _, when := range []faultproxy.When{faultproxy.AfterAnswer, faultproxy.BeforeAnswer} {
			k := killPoint{n: n + 1, when: when}
			name := fmt.Sprintf("write%02d-%s/%s", k.n, call, strings.ReplaceAll(when.String(), " ", "-"))
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				t.Run(name, func(t *testing.T) { crashAndRestart(t, bin, k) })
			})
		}
	}
	wg.Wait()
}

// crashAndRestart runs one case of the matrix.
func crashAndRestart(t *testing.T, bin string, k killPoint) {
	c := newCrashCase(t, bin, 1)
	// A case takes under 10 s on a quiet emulator, and 25 s when each of
	// its calls takes 250 ms: the killed worker's run, the wait for its
	// hidden message (awscrash's 4 s visibility) and its lease (3 s), and
	// the whole run again with its 6 s sleep.
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	first := c.serve(ctx, &k)
	if !first.killed {
		if first.err != nil {
			t.Fatalf("the first worker failed: %v\n%s", first.err, first.stderr)
		}
		t.Logf("the run finished in fewer than %d writes: nothing to kill", k.n)
	}
	recorded := c.recordedSteps(t)
	c.proxy.Resume()
	if second := c.serve(ctx, nil); second.err != nil {
		t.Fatalf("the restarted worker, after a kill at %s: %v\n%s\nlog:\n%s", k, second.err, second.stderr, c.timeline(t))
	}
	c.checkFinished(t, recorded)
}

// timeline lists the runs' events, for a failure message.
func (c *crashCase) timeline(t *testing.T) string {
	var b strings.Builder
	for _, id := range c.runIDs() {
		evs, err := c.world.Events(context.Background(), id, 0)
		fmt.Fprintf(&b, "run %s (%v):\n", id, err)
		for _, ev := range evs {
			fmt.Fprintf(&b, "  %d %s %s %s\n", ev.Slot, ev.Type, ev.CorrelationID, ev.Payload)
		}
	}
	return b.String()
}

// TestThrottlingStorm throttles 30% of the DynamoDB writes of a worker
// process serving 50 runs at once, for the first 10 s: every run
// completes, and no log holds a step's completion or a terminal event
// twice.
func TestThrottlingStorm(t *testing.T) {
	weather(t, faultproxy.Storm{Match: faultproxy.DynamoDBWrites, Rate: 0.3, For: 10 * time.Second, Answer: faultproxy.Throttle})
}

// TestServerErrorStorm answers 20% of the DynamoDB and SQS writes of a
// worker process serving 50 runs at once with HTTP 500 for the first 10 s,
// half of them after the write was carried out: the SDK's retries repeat
// those, and every repeat must be harmless.
func TestServerErrorStorm(t *testing.T) {
	weather(t,
		faultproxy.Storm{Match: faultproxy.Writes, Rate: 0.1, For: 10 * time.Second, Answer: faultproxy.ServerError},
		faultproxy.Storm{Match: faultproxy.Writes, Rate: 0.1 / 0.9, For: 10 * time.Second, Answer: faultproxy.LostAnswer})
}

// weather serves 50 runs at once through storms: every run completes, with
// each step completed once in its log and one terminal event. A write the
// SDK's five attempts did not get through fails its invocation, whose
// message comes back after the visibility timeout; a Start that fails is
// retried by its client (the worker).
func weather(t *testing.T, storms ...faultproxy.Storm) {
	if testing.Short() {
		t.Skip("builds a worker process and serves 50 runs")
	}
	emulatorConfig(t)
	c := newCrashCase(t, buildAWSCrash(t), 50)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, s := range storms {
		c.proxy.Inject(s)
	}
	began := time.Now()
	exit := c.serve(ctx, nil)
	if exit.err != nil {
		t.Fatalf("the worker: %v\n%s\n%s", exit.err, exit.stderr, c.timeline(t))
	}
	c.checkLogs(t)
	reran := 0
	for _, steps := range c.attempts(t) {
		for _, ran := range steps {
			reran += ran - 1
		}
	}
	t.Logf("50 runs done in %s: %d calls faulted, %d writes got through; %d invocations and %d Starts failed and were retried; %d step attempts ran again",
		time.Since(began).Round(100*time.Millisecond), c.proxy.Faults(), len(c.proxy.Writes()),
		strings.Count(exit.stderr, "processing run failed"), strings.Count(exit.stderr, "(try "), reran)
}
