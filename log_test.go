package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// logLines is a concurrency-safe JSON log sink that tests read back as
// one map per line.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// find returns the lines with msg whose attributes include want.
func find(lines []map[string]any, msg string, want map[string]any) []map[string]any {
	var found []map[string]any
next:
	for _, l := range lines {
		if l["msg"] != msg {
			continue
		}
		for k, v := range want {
			if fmt.Sprint(l[k]) != fmt.Sprint(v) {
				continue next
			}
		}
		found = append(found, l)
	}
	return found
}

var logFlaky = workflow.DefineStep("logtest.flaky", func(ctx context.Context, failures int) (int, error) {
	info, _ := workflow.GetStepInfo(ctx)
	workflow.StepLogger(ctx).Info("charging")
	if info.Attempt <= failures {
		return 0, fmt.Errorf("attempt %d: gateway timeout", info.Attempt)
	}
	return info.Attempt, nil
}, workflow.WithMaxRetries(2), workflow.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))

var logApproval = workflow.Define("logtest.approval", func(ctx workflow.Context, failures int) (int, error) {
	attempts, err := logFlaky.Call(ctx, failures)
	if err != nil {
		return 0, err
	}
	workflow.Logger(ctx).Info("waiting for approval")
	hook := workflow.CreateHook[string](ctx, workflow.WithToken("logtest-"+ctx.RunID()))
	who, err := hook.Receive(ctx)
	workflow.Logger(ctx).Info("approved", "by", who)
	return attempts, err
})

// TestLogsOfARetryingStepAndAFailingRun reads the worker's JSON log of a
// run whose step fails once and is retried, that suspends on a hook and
// resumes, and of a run whose step gives up: each line the on-call
// engineer looks for is there once, with the attributes to query by.
func TestLogsOfARetryingStepAndAFailingRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := memory.New()
	sink := &logLines{}
	logger := slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Logger: logger})
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx) }()
	c := workflow.NewClient(w)

	ok, err := workflow.Start(ctx, c, logApproval, 1, workflow.WithRunID("run-ok"))
	if err != nil {
		t.Fatal(err)
	}
	resumeWhenCreated(t, ctx, c, "logtest-run-ok", "alice")
	if got, err := ok.Result(ctx); err != nil || got != 2 {
		t.Fatalf("result = %d, %v; want 2 attempts", got, err)
	}
	failing, err := workflow.Start(ctx, c, logApproval, 10, workflow.WithRunID("run-failing"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := failing.Result(ctx); !errors.Is(err, workflow.ErrRunFailed) {
		t.Fatalf("err = %v, want the run failed", err)
	}
	cancel()
	<-done

	lines := sink.lines(t)
	okRun := map[string]any{"run_id": "run-ok", "workflow": "logtest.approval"}
	step := map[string]any{"run_id": "run-ok", "workflow": "logtest.approval", "step": "logtest.flaky", "attempt": 1}
	want := []struct {
		msg   string
		attrs map[string]any
		level string
	}{
		{"workflow: run started", okRun, "INFO"},
		{"workflow: step attempt started", step, "DEBUG"},
		{"charging", step, "INFO"},
		{"workflow: step attempt failed; retrying", step, "WARN"},
		{"workflow: step completed", map[string]any{"run_id": "run-ok", "step": "logtest.flaky", "attempt": 2}, "DEBUG"},
		{"waiting for approval", okRun, "INFO"},
		{"workflow: run suspended", map[string]any{"run_id": "run-ok", "waiting_for": "hook"}, "INFO"},
		{"workflow: run resumed", okRun, "INFO"},
		{"approved", map[string]any{"run_id": "run-ok", "by": "alice"}, "INFO"},
		{"workflow: run completed", okRun, "INFO"},
		{"workflow: step failed; no retries left", map[string]any{"run_id": "run-failing", "step": "logtest.flaky", "attempt": 3}, "ERROR"},
		{"workflow: run failed", map[string]any{"run_id": "run-failing", "workflow": "logtest.approval"}, "ERROR"},
	}
	for _, w := range want {
		found := find(lines, w.msg, w.attrs)
		if len(found) != 1 {
			t.Errorf("%d lines %q with %v, want 1", len(found), w.msg, w.attrs)
			continue
		}
		if found[0]["level"] != w.level {
			t.Errorf("%q logged at %v, want %s", w.msg, found[0]["level"], w.level)
		}
	}
	retry := find(lines, "workflow: step attempt failed; retrying", step)
	if len(retry) == 1 && (retry[0]["retry_at"] == nil || !strings.Contains(fmt.Sprint(retry[0]["err"]), "gateway timeout")) {
		t.Errorf("the retry line lacks its time or error: %v", retry[0])
	}
	failed := find(lines, "workflow: run failed", map[string]any{"run_id": "run-failing"})
	if len(failed) == 1 && !strings.Contains(fmt.Sprint(failed[0]["err"]), "attempt 3: gateway timeout") {
		t.Errorf("the failure line lacks the step's error: %v", failed[0])
	}
}

// resumeWhenCreated resumes a hook as soon as its run has created it.
func resumeWhenCreated(t *testing.T, ctx context.Context, c *workflow.Client, token, payload string) {
	t.Helper()
	for {
		err := workflow.ResumeHook(ctx, c, token, payload)
		if !errors.Is(err, workflow.ErrHookNotFound) {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the run never created its hook")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A run whose code no longer matches its log fails with a line that says
// so, apart from the failures of the code itself.
func TestNondeterminismIsLoggedAsSuch(t *testing.T) {
	ctx := t.Context()
	w := memory.New()
	sink := &logLines{}
	// Every wait suspends: the hook's message is replayed into new code,
	// from the whole log, as a new deployment (a new process, with nothing
	// warm) would replay it.
	worker := workflow.NewWorker(w, workflow.WorkerOptions{InlineWait: -1, WarmRuns: -1, Logger: slog.New(slog.NewJSONHandler(sink, nil))})
	c := workflow.NewClient(w)
	driftTo.Store("")
	defer driftTo.Store("")
	run, err := workflow.Start(ctx, c, drifter, struct{}{}, workflow.WithRunID("run-drifted"))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil { // up to the hook
		t.Fatal(err)
	}
	driftTo.Store("Sleep") // the code changed under the waiting run
	if err := workflow.ResumeHook(ctx, c, "drifter", 1); err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Result(ctx); !errors.As(err, new(*workflow.NondeterminismError)) {
		t.Fatalf("err = %v, want a NondeterminismError", err)
	}
	lines := find(sink.lines(t), "workflow: run failed: the workflow code no longer matches the run's log (nondeterminism)",
		map[string]any{"run_id": "run-drifted", "workflow": "test.drifter", "level": "ERROR"})
	if len(lines) != 1 || !strings.Contains(fmt.Sprint(lines[0]["err"]), "nondeterminism_test.go:") {
		t.Fatalf("nondeterminism lines %v, want one naming the call's line in:\n%s", lines, sink.buf.String())
	}
}
