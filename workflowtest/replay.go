package workflowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/timeline"
	"github.com/lambdaworkflow/workflow/world"
)

// Replay fails the test unless the workflow code of the test binary still
// reproduces a recorded run (see workflow.Replay): keep the logs of runs
// recorded with earlier versions of the code, and a change that would
// break such runs in flight fails here, naming the event it no longer
// reproduces and the call the code made instead.
//
//	workflowtest.Replay(t, run.Events()) // a run of today's code
func Replay(t testing.TB, events []world.Event) {
	t.Helper()
	log, err := json.Marshal(events)
	if err != nil {
		t.Fatalf("workflowtest: encoding the event log: %v", err)
	}
	replay(t, log, events)
}

// ReplayFile is Replay for a log kept in a file: a JSON array of events,
// as Events returns them. Record one with SaveLog.
func ReplayFile(t testing.TB, path string) {
	t.Helper()
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("workflowtest: %v", err)
	}
	var events []world.Event
	if err := json.Unmarshal(log, &events); err != nil {
		t.Fatalf("workflowtest: %s: %v", path, err)
	}
	replay(t, log, events)
}

func replay(t testing.TB, log []byte, events []world.Event) {
	t.Helper()
	if err := workflow.Replay(context.Background(), log); err != nil {
		t.Fatalf("workflowtest: the workflow code no longer reproduces its log: %v\n%s", err, timeline.String(events))
	}
}

// SaveLog writes a run's event log to a file that ReplayFile reads, one
// event per line, so that a change of format shows in a diff. The
// command-line tool writes the same with workflow inspect run ID --json.
func SaveLog(t testing.TB, path string, events []world.Event) {
	t.Helper()
	var log bytes.Buffer
	err := timeline.WriteJSON(&log, events)
	if err == nil {
		err = os.WriteFile(path, log.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatalf("workflowtest: saving the log: %v", err)
	}
}
