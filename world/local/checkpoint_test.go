package local

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// The writer never checkpoints inside a commit: its connection has the
// automatic checkpoint turned off.
func TestWriterDoesNotCheckpoint(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.wmu.Lock()
	defer w.wmu.Unlock()
	var pages int
	if err := w.wconn.QueryRowContext(context.Background(), "PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != 0 {
		t.Fatalf("wal_autocheckpoint = %d, want 0 (checkpoints run in the background)", pages)
	}
}

// Under a steady stream of step-sized commits the background checkpointer
// keeps the WAL bounded: 4,000 commits of two 1 KB events write well over
// 100 MB of WAL frames, which would all stay in the file if nothing
// checkpointed or the WAL never restarted.
func TestBackgroundCheckpointBoundsTheWAL(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := t.Context()
	run := world.Run{ID: "steady", Workflow: "wf", Status: world.StatusRunning, CreatedAt: time.Now()}
	if _, err := w.CreateRun(ctx, run, []world.Event{{Type: world.RunCreated}}); err != nil {
		t.Fatal(err)
	}
	payload := json.RawMessage(`"` + strings.Repeat("x", 1000) + `"`)
	for i := range 4000 {
		step := []world.Event{
			{Type: world.StepCompleted, CorrelationID: fmt.Sprint("step-", i), Payload: payload, CreatedAt: time.Now()},
			{Type: world.StepCreated, CorrelationID: fmt.Sprint("step-", i+1), Payload: payload, CreatedAt: time.Now()},
		}
		if _, err := w.AppendEvents(ctx, run.ID, int64(2+2*i), step, nil); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(filepath.Join(dir, "world.db-wal"))
	if err != nil {
		t.Fatal(err)
	}
	// The WAL's high-water mark: the bound, plus what the writer appended
	// while the last checkpoints ran, with room for a loaded machine.
	if limit := int64(3 * maxWALFrames * 4096); st.Size() > limit {
		t.Fatalf("WAL is %d bytes after 4,000 commits, want at most %d", st.Size(), limit)
	}
}
