package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// awsGatedV2 is set once the test "deploys" the second version of
// awsGated, which asks a step before the hook its runs wait on.
var awsGatedV2 atomic.Bool

// awsGated moves forward (Latest): the next deployment drives its runs,
// so code that breaks them fails the gate.
var awsGated = workflow.Define("aws-test.gated", func(ctx workflow.Context, token string) (int, error) {
	if awsGatedV2.Load() {
		if _, err := awsStep.Call(ctx, 0); err != nil {
			return 0, err
		}
	}
	_, err := workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
	return 0, err
}, workflow.WithVersionPolicy(workflow.Latest))

// The deploy gate on the AWS World: a run waiting on a hook replays on
// the code it started on, and fails, naming the hook's slot, on code
// that asks a step first. The gate only reads: a listing per status and
// the log of each run in flight.
func TestReplayRunningOnTheAWSWorld(t *testing.T) {
	w := newTestWorld(t)
	ctx := context.Background()
	c := workflow.NewClient(w)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	token := fmt.Sprint("aws-test-gate:", time.Now().UnixNano())
	waiting, err := workflow.Start(ctx, c, awsGated, token)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, waiting.ID); err != nil {
		t.Fatal(err)
	}
	finished, err := workflow.Start(ctx, c, awsChain, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, finished.ID); err != nil {
		t.Fatal(err)
	}
	registry := workflow.NewRegistry(awsGated, awsChain)

	w.ResetCalls()
	report, err := workflow.ReplayRunning(ctx, w, registry)
	if err != nil || report.Replayed != 1 || len(report.Failures) != 0 {
		t.Fatalf("on the code the run started on: %+v, %v", report, err)
	}
	calls := w.Calls()
	t.Logf("AWS calls of a gate over one run in flight: %v", calls)
	for op, n := range calls {
		if !strings.HasSuffix(op, "Query") && !strings.HasSuffix(op, "GetItem") && !strings.HasSuffix(op, "Scan") {
			t.Errorf("the gate made %d %s calls; it only reads", n, op)
		}
	}

	awsGatedV2.Store(true)
	defer awsGatedV2.Store(false)
	report, err = workflow.ReplayRunning(ctx, w, registry)
	if err != nil || len(report.Failures) != 1 || report.Failures[0].RunID != waiting.ID {
		t.Fatalf("on the changed code: %+v, %v", report, err)
	}
	nd, ok := errors.AsType[*workflow.NondeterminismError](report.Failures[0].Err)
	if !ok || !strings.Contains(nd.Expected, "hook") || !strings.Contains(nd.Found, `step "aws-test.step" at replay_gate_test.go:`) {
		t.Errorf("the failure does not name the recorded hook and the step called instead: %v", report.Failures[0].Err)
	}
}

// The gate over a sealed run in flight: with the workers' codec it opens
// the log and replays it (and still finds the changed code that breaks
// it); without, it cannot check the run and reports it with the reason,
// which stops the deploy.
func TestReplayRunningOpensSealedRuns(t *testing.T) {
	cfg := emulatorConfig(t)
	w := newTestWorld(t)
	ctx := t.Context()
	chain := kmsChain(NewKMSKeys(cfg, newKMSKey(t, cfg)))
	token := fmt.Sprint("aws-test-gate-sealed:", time.Now().UnixNano())
	waiting, err := workflow.Start(ctx, workflow.NewClient(w, workflow.WithPayloadCodec(chain)), awsGated, token)
	if err != nil {
		t.Fatal(err)
	}
	if err := workflow.NewWorker(w, workflow.WorkerOptions{Codec: chain}).Process(ctx, waiting.ID); err != nil {
		t.Fatal(err)
	}
	registry := workflow.NewRegistry(awsGated)
	gate := func(opts ...workflow.ClientOption) workflow.ReplayReport {
		t.Helper()
		report, err := workflow.ReplayRunning(ctx, w, registry, opts...)
		if err != nil || report.Replayed != 1 {
			t.Fatalf("the gate: %+v, %v", report, err)
		}
		return report
	}

	if r := gate(); len(r.Failures) != 1 || !strings.Contains(fmtErr(r.Failures[0].Err), "payload is encrypted; no key for run "+waiting.ID) {
		t.Fatalf("without the key: %+v, want the run failed as unreadable", r)
	}
	reader := workflow.WithPayloadCodec(kmsChain(NewKMSKeys(cfg, "unused"))) // another process: the key ARN is the run's
	if r := gate(reader); len(r.Failures) != 0 {
		t.Fatalf("with the key, on the code the run started on: %+v", r.Failures)
	}
	awsGatedV2.Store(true)
	defer awsGatedV2.Store(false)
	if r := gate(reader); len(r.Failures) != 1 || !errors.As(r.Failures[0].Err, new(*workflow.NondeterminismError)) {
		t.Fatalf("with the key, on the changed code: %+v, want a nondeterminism failure", r.Failures)
	}
}
