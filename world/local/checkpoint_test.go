package local

import (
	"context"
	"encoding/json"
	"fmt"
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

// A checkpoint once the WAL is over its bound copies every frame, so the
// writer's next commit restarts the WAL from its start instead of growing
// it: the WAL holds only that commit's frames afterwards.
func TestCheckpointRestartsTheWAL(t *testing.T) {
	w, err := Open(t.TempDir())
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
	slot := int64(2)
	appendStep := func(i int) {
		t.Helper()
		step := []world.Event{
			{Type: world.StepCompleted, CorrelationID: fmt.Sprint("step-", i), Payload: payload, CreatedAt: time.Now()},
			{Type: world.StepCreated, CorrelationID: fmt.Sprint("step-", i+1), Payload: payload, CreatedAt: time.Now()},
		}
		if _, err := w.AppendEvents(ctx, run.ID, slot, step, nil); err != nil {
			t.Fatal(err)
		}
		slot += int64(len(step))
	}
	// Enough commits (several WAL frames each) to pass the bound even if
	// the background checkpoints restarted the WAL along the way.
	for i := range 2 * maxWALFrames / 3 {
		appendStep(i)
	}
	w.ckpt.checkpoint(&w.wmu)
	appendStep(-1)
	frames, err := w.ckpt.passive()
	if err != nil {
		t.Fatal(err)
	}
	if frames > 100 {
		t.Fatalf("the WAL holds %d frames after a checkpoint and one commit; it did not restart", frames)
	}
}
