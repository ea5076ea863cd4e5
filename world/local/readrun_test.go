package local

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// servingWorld opens a World that serves its directory's queue, as the
// one a worker receives from does.
func servingWorld(t *testing.T, dir string) *World {
	t.Helper()
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.claimQueue(); err != nil {
		t.Fatal(err)
	}
	return w
}

// startRun starts a run with attributes, an input and two first events,
// times with a monotonic reading (which a stored time loses).
func startRun(t *testing.T, w *World, id string) {
	t.Helper()
	now := time.Now()
	run := world.Run{ID: id, Workflow: "wf", Status: world.StatusPending, CreatedAt: now, UpdatedAt: now,
		Input: []byte(`{"n":1}`), Attributes: map[string]string{"team": "a"}}
	first := []world.Event{
		{Type: world.RunCreated, Payload: []byte(`{"workflow":"wf"}`), CreatedAt: now},
		{Type: world.RunStarted, CreatedAt: now},
	}
	if _, err := w.StartRun(context.Background(), run, first, world.Message{RunID: id}); err != nil {
		t.Fatal(err)
	}
}

type readRunAnswer struct {
	Run      world.Run
	Events   []world.Event
	Complete bool
}

func readRun(t *testing.T, w *World, id string, after int64) readRunAnswer {
	t.Helper()
	run, events, inbox, complete, err := w.ReadRun(context.Background(), id, after)
	if err != nil || len(inbox) > 0 {
		t.Fatalf("ReadRun(%s, %d): inbox %v, %v", id, after, inbox, err)
	}
	return readRunAnswer{run, events, complete}
}

func held(w *World, id string) bool {
	w.fresh.mu.Lock()
	defer w.fresh.mu.Unlock()
	_, ok := w.fresh.runs[id]
	return ok
}

// The first read of a run the World started comes from memory and equals,
// field for field, what the database answers for it.
func TestAStartedRunIsReadAsStored(t *testing.T) {
	w := servingWorld(t, t.TempDir())
	for _, after := range []int64{0, 1, 2} {
		id := fmt.Sprintf("run-%d", after)
		startRun(t, w, id)
		if !held(w, id) {
			t.Fatalf("run %s is not held after its start", id)
		}
		fromMemory := readRun(t, w, id, after)
		if held(w, id) {
			t.Fatalf("run %s is still held after its first read", id)
		}
		fromDatabase := readRun(t, w, id, after)
		if !reflect.DeepEqual(fromMemory, fromDatabase) {
			t.Fatalf("after %d:\nfrom memory   %+v\nfrom database %+v", after, fromMemory, fromDatabase)
		}
		if n := len(fromDatabase.Events); n != int(2-after) || !fromDatabase.Complete || fromDatabase.Run.LastSlot != 2 {
			t.Fatalf("after %d: %d events, complete %v, last slot %d", after, n, fromDatabase.Complete, fromDatabase.Run.LastSlot)
		}
	}
}

// A run written after its start is read from the database, with the write.
func TestAWrittenRunIsNotReadFromMemory(t *testing.T) {
	w := servingWorld(t, t.TempDir())
	startRun(t, w, "r")
	if _, err := w.AppendEvents(context.Background(), "r", 3, []world.Event{{Type: world.HookReceived, CorrelationID: "h"}}, nil); err != nil {
		t.Fatal(err)
	}
	got := readRun(t, w, "r", 0)
	if got.Run.LastSlot != 3 || len(got.Events) != 3 || got.Events[2].Type != world.HookReceived {
		t.Fatalf("after an append: last slot %d, events %+v", got.Run.LastSlot, got.Events)
	}
}

// A World that does not serve the queue (a client's) holds nothing: no
// worker of its own reads what it starts.
func TestAClientWorldHoldsNoRun(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	startRun(t, w, "r")
	if held(w, "r") {
		t.Fatal("a World that does not serve the queue holds the run it started")
	}
}

// A read before the lease may miss an append another process made after
// the start, even from memory; the lease reports it, and the engine reads
// it then.
func TestTheLeaseReportsWhatAReadBeforeItMissed(t *testing.T) {
	dir := t.TempDir()
	w := servingWorld(t, dir)
	startRun(t, w, "r")
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.AppendEvents(context.Background(), "r", 3, []world.Event{{Type: world.HookReceived, CorrelationID: "h"}}, nil); err != nil {
		t.Fatal(err)
	}
	read := readRun(t, w, "r", 0)
	now := time.Now()
	_, last, err := w.AcquireLeaseAt(context.Background(), "r", world.Lease{Owner: "inv", Until: now.Add(time.Minute)}, now)
	if err != nil || last != 3 {
		t.Fatalf("AcquireLeaseAt: last slot %d, %v; want 3", last, err)
	}
	if read.Run.LastSlot > last {
		t.Fatalf("the read saw slot %d, past the lease's %d", read.Run.LastSlot, last)
	}
}

// Another process's commit empties what the World holds.
func TestAnotherProcessesCommitDropsHeldRuns(t *testing.T) {
	dir := t.TempDir()
	w := servingWorld(t, dir)
	w.watchOtherProcesses()
	startRun(t, w, "r")
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.CreateRun(context.Background(), world.Run{ID: "other", Workflow: "wf", Status: world.StatusPending}, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * crossProcessInterval)
	for held(w, "r") {
		if time.Now().After(deadline) {
			t.Fatalf("run still held %v after another process's commit", 10*crossProcessInterval)
		}
		time.Sleep(crossProcessInterval / 5)
	}
}

// A log longer than readRunMax is left for a read after the lease: the run
// comes back alone.
func TestALongLogIsNotReadWithTheRun(t *testing.T) {
	w := servingWorld(t, t.TempDir())
	ctx := context.Background()
	if _, err := w.CreateRun(ctx, world.Run{ID: "r", Workflow: "wf", Status: world.StatusRunning}, nil); err != nil {
		t.Fatal(err)
	}
	for slot := int64(1); slot <= readRunMax+1; slot++ {
		if _, err := w.AppendEvents(ctx, "r", slot, []world.Event{{Type: world.StepCreated, CorrelationID: fmt.Sprint(slot)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := readRun(t, w, "r", 0); got.Complete || got.Events != nil || got.Run.LastSlot != readRunMax+1 {
		t.Fatalf("a log of %d: complete %v, %d events, last slot %d", readRunMax+1, got.Complete, len(got.Events), got.Run.LastSlot)
	}
	if got := readRun(t, w, "r", 1); !got.Complete || len(got.Events) != readRunMax || got.Events[0].Slot != 2 {
		t.Fatalf("its last %d: complete %v, %d events", readRunMax, got.Complete, len(got.Events))
	}
	if _, _, _, _, err := w.ReadRun(ctx, "missing", 0); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("ReadRun of a missing run: %v", err)
	}
}

// runReadColumnCount counts runReadColumns, which skipRunColumns relies on.
func TestRunReadColumnCount(t *testing.T) {
	if n := strings.Count(runReadColumns, ",") + 1; n != runReadColumnCount {
		t.Fatalf("runReadColumns has %d columns, runReadColumnCount says %d", n, runReadColumnCount)
	}
}
