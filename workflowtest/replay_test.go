package workflowtest_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
)

func TestReplayOfASavedRun(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, reminder, "lin@example.com")
	env.Advance(7 * 24 * time.Hour)
	env.Advance(24 * time.Hour) // nobody unsubscribes: the email step fails for good
	if _, err := run.Result(); err == nil {
		t.Fatal("the real email step succeeded")
	}
	workflowtest.Replay(t, run.Events())
	path := filepath.Join(t.TempDir(), "reminder.json")
	workflowtest.SaveLog(t, path, run.Events())
	workflowtest.ReplayFile(t, path)
}

func TestReplayFailsTheTestOnDrift(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, reminder, "kim@example.com")
	env.RunUntilIdle()
	events := run.Events()
	// As if the workflow had once called a step first, where it sleeps now.
	for i, ev := range events {
		if ev.Type == world.WaitCreated {
			events[i].Type, events[i].Payload = world.StepCreated, json.RawMessage(`{"step":"wt.email"}`)
		}
	}
	path := filepath.Join(t.TempDir(), "drifted.json")
	workflowtest.SaveLog(t, path, events)
	for name, replay := range map[string]func(testing.TB){
		"events": func(tb testing.TB) { workflowtest.Replay(tb, events) },
		"file":   func(tb testing.TB) { workflowtest.ReplayFile(tb, path) },
	} {
		msg := fatalOf(t, replay)
		if !strings.Contains(msg, `the log records step "wt.email" as call #1, but the workflow called sleep(168h0m0s) at env_test.go:`) ||
			!strings.Contains(msg, "step_created") {
			t.Errorf("%s: the failure does not explain the drift with the log's timeline:\n%s", name, msg)
		}
	}
}

// fatalOf runs fn with a testing.TB whose Fatalf records its message and
// ends fn, and returns the message ("" if fn did not fail).
func fatalOf(t *testing.T, fn func(testing.TB)) string {
	tb := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb.msg
}

type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
