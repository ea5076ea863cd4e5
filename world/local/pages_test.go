package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// walFrameBytes is one WAL frame: its header and a 4 KiB page.
const walFrameBytes = 24 + 4096

// Each commit writes the pages of every B-tree it changes, and SQLite
// rewrites an index entry for each column an UPDATE sets, changed or not.
// These are the pages a run's commits write; one more means a statement
// sets a column it need not (a step's append writes the run's page and the
// log's, not the due-time index's).
func TestPagesPerCommit(t *testing.T) {
	dir := t.TempDir()
	w := servingWorld(t, dir)
	ctx := context.Background()
	wal := filepath.Join(dir, "world.db-wal")
	last := walSize(t, wal)
	pages := func(what string, want int64) {
		t.Helper()
		size := walSize(t, wal)
		if got := (size - last) / walFrameBytes; got != want {
			t.Errorf("%s wrote %d pages, want %d", what, got, want)
		}
		last = size
	}
	now := time.Now()
	run := world.Run{ID: "r", Workflow: "wf", Status: world.StatusPending, CreatedAt: now}
	if _, err := w.StartRun(ctx, run, []world.Event{{Type: world.RunCreated}}, world.Message{RunID: "r", DedupKey: "start"}); err != nil {
		t.Fatal(err)
	}
	pages("a start (the run, its key and 3 indexes, the log, the message and its 2 indexes)", 9)
	d, err := w.Receive(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pages("a receive (noted, written with the next commit)", 0)
	lease := world.Lease{Owner: "inv", Until: now.Add(time.Minute)}
	if _, err := w.AcquireLease(ctx, "r", lease, now); err != nil {
		t.Fatal(err)
	}
	pages("the lease with the receive (the run, the message and its 2 indexes)", 4)
	step := []world.Event{{Type: world.StepCreated, CorrelationID: "s"}, {Type: world.StepStarted, CorrelationID: "s"}}
	if _, err := w.AppendLeased(ctx, "inv", "r", 2, step, &world.RunUpdate{Status: world.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	pages("a leased append that sets the status (the run, its status index, the log)", 3)
	if _, err := w.AppendLeased(ctx, "inv", "r", 4, []world.Event{{Type: world.StepCompleted, CorrelationID: "s"}}, nil); err != nil {
		t.Fatal(err)
	}
	pages("a step's leased append (the run, the log)", 2)
	if _, err := w.AppendLeased(ctx, "inv", "r", 5, []world.Event{{Type: world.RunCompleted}}, &world.RunUpdate{Status: world.StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	pages("the run's end (the run, its status, finished and due indexes, the log)", 5)
	if err := w.Ack(ctx, d); err != nil {
		t.Fatal(err)
	}
	pages("an ack (the message and its index)", 2)
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
