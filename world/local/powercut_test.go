package local

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// disk simulates what a power cut leaves of a database: at each fsync of
// the WAL it takes an image of the database file and the WAL as they are
// when the fsync is called, everything that fsync makes durable; a power
// cut leaves the last image. Writes made after it are lost, which is more
// than a real power cut must lose (some unsynced writes may reach the
// disk), and TestPowerCutKeepsAPrefix covers those.
type disk struct {
	mu     sync.Mutex
	images []image
}

type image struct{ db, wal []byte }

// fsync syncs the WAL f and takes the image it makes durable.
func (d *disk) fsync(f *os.File) error {
	img, err := readImage(strings.TrimSuffix(f.Name(), "-wal"))
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.images = append(d.images, img)
	return nil
}

func readImage(dbPath string) (image, error) {
	db, err := os.ReadFile(dbPath)
	if err != nil {
		return image{}, err
	}
	wal, err := os.ReadFile(dbPath + "-wal")
	return image{db, wal}, err
}

// now is the image a power cut at this moment leaves, and its number.
func (d *disk) now(t *testing.T) (image, int) {
	t.Helper()
	i := d.last()
	if i < 0 {
		t.Fatal("nothing has been synced yet")
	}
	return d.image(i), i
}

// last is the number of the last image, -1 if none.
func (d *disk) last() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.images) - 1
}

func (d *disk) image(i int) image {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.images[i]
}

// openWatched opens a full-sync World in dir whose fsyncs d images, and
// closes it when the test ends.
func openWatched(t *testing.T, dir string, d *disk) *World {
	t.Helper()
	w, err := Open(dir, WithFullSync(), withFsync(d.fsync))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// reboot opens a World on a copy of img: SQLite recovers the WAL as it
// does after a power cut (there is no shared-memory index to go by).
func reboot(t *testing.T, img image) *World {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "world.db"), img.db, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "world.db-wal"), img.wal, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir)
	if err != nil {
		t.Fatalf("open after the power cut: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// survivor checks what a World kept after a power cut.
type survivor func(ctx context.Context, w *World) error

// survives checks that everything in acked is in the World a power cut
// leaves now, and that lost (if set) is not: the control that shows the
// simulation loses what was not synced.
func survives(t *testing.T, d *disk, what string, acked []survivor, lost survivor) {
	t.Helper()
	img, _ := d.now(t)
	w := reboot(t, img)
	ctx := t.Context()
	for _, s := range acked {
		if err := s(ctx, w); err != nil {
			t.Errorf("after %s and a power cut: %v", what, err)
		}
	}
	if lost != nil && lost(ctx, w) == nil {
		t.Errorf("after %s and a power cut: an unsynced write survived the simulated power cut", what)
	}
}

func hasEvent(runID, corr string) survivor {
	return func(ctx context.Context, w *World) error {
		evs, err := w.Events(ctx, runID, 0)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.CorrelationID == corr {
				return nil
			}
		}
		return fmt.Errorf("run %s has no event %q: %+v", runID, corr, evs)
	}
}

func hasStatus(runID string, status world.RunStatus) survivor {
	return func(ctx context.Context, w *World) error {
		r, err := w.GetRun(ctx, runID)
		if err == nil && r.Status != status {
			err = fmt.Errorf("run %s is %s, want %s", runID, r.Status, status)
		}
		return err
	}
}

// hasChunks checks that a stream has n chunks at least and, if closed is
// set, is closed.
func hasChunks(name string, n int, closed bool) survivor {
	return func(ctx context.Context, w *World) error {
		chunks, isClosed, err := w.ReadStream(ctx, name, 0)
		if err == nil && (len(chunks) < n || closed && !isClosed) {
			err = fmt.Errorf("stream %s has %d chunks, closed %v; want %d, closed %v", name, len(chunks), isClosed, n, closed)
		}
		return err
	}
}

// hasMessage checks that a message with the dedup key is queued.
func hasMessage(key string) survivor {
	return func(ctx context.Context, w *World) error {
		var n int
		err := w.rdb.QueryRowContext(ctx, `SELECT count(*) FROM queue WHERE dedup_key = ?`, key).Scan(&n)
		if err == nil && n == 0 {
			err = fmt.Errorf("no message %q queued", key)
		}
		return err
	}
}

// TestPowerCut runs a run's life on a full-sync World and cuts the power
// after every call: whatever a call acknowledged, and whatever a read
// returned, is there after the cut; what a run wrote for itself and no
// one has read yet is not (the controls).
func TestPowerCut(t *testing.T) {
	ctx := t.Context()
	var d disk
	w := openWatched(t, t.TempDir(), &d)
	var acked []survivor
	ack := func(what string, err error, s survivor) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		acked = append(acked, s)
		survives(t, &d, what, acked, nil)
	}
	unacked := func(what string, err error, lost survivor) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		survives(t, &d, what, acked, lost)
	}

	_, err := w.StartRun(ctx, world.Run{ID: "r", Workflow: "wf", Status: world.StatusPending},
		[]world.Event{{Type: world.RunCreated, CorrelationID: "created"}}, world.Message{RunID: "r", DedupKey: "start"})
	ack("StartRun", err, hasEvent("r", "created"))
	survives(t, &d, "StartRun", []survivor{hasMessage("start")}, nil) // until the Ack below

	delivery, err := w.Receive(ctx, time.Minute)
	unacked("Receive", err, nil)
	lease := world.Lease{Owner: "inv", Until: time.Now().Add(time.Minute)}
	_, err = w.AcquireLease(ctx, "r", lease, time.Now())
	unacked("AcquireLease", err, nil)
	_, err = w.AppendLeased(ctx, lease.Owner, "r", 2, []world.Event{{Type: world.StepCompleted, CorrelationID: "step"}},
		&world.RunUpdate{Status: world.StatusRunning})
	unacked("a step's AppendLeased", err, hasEvent("r", "step"))

	_, err = w.AppendEvents(ctx, "r", 3, []world.Event{{Type: world.HookReceived, CorrelationID: "resume"}}, nil)
	// The WAL keeps a prefix: the step before the resume is durable now too.
	ack("a resume's AppendEvents", err, func(ctx context.Context, w *World) error {
		return errors.Join(hasEvent("r", "resume")(ctx, w), hasEvent("r", "step")(ctx, w))
	})
	ack("Enqueue", w.Enqueue(ctx, world.Message{RunID: "r", DedupKey: "wake"}), hasMessage("wake"))
	unacked("Ack", w.Ack(ctx, delivery), nil)

	unacked("WriteStream", w.WriteStream(ctx, "s", [][]byte{[]byte("a"), []byte("b")}), hasChunks("s", 1, false))
	_, _, err = w.ReadStream(ctx, "s", 0)
	ack("ReadStream", err, hasChunks("s", 2, false))
	unacked("CloseStream", w.CloseStream(ctx, "s"), hasChunks("s", 2, true))
	_, _, err = w.ReadStream(ctx, "s", 0)
	ack("ReadStream of the close", err, hasChunks("s", 2, true))

	_, err = w.AppendLeased(ctx, lease.Owner, "r", 4, []world.Event{{Type: world.RunCompleted, CorrelationID: "end"}},
		&world.RunUpdate{Status: world.StatusCompleted})
	unacked("the run's end", err, hasStatus("r", world.StatusCompleted))
	_, err = w.GetRun(ctx, "r")
	ack("GetRun of the end", err, hasStatus("r", world.StatusCompleted))
}

// TestPowerCutKeepsAPrefix cuts the WAL at every frame, and inside one,
// between the last fsync and its end: a power cut that keeps part of what
// was not synced leaves a database that opens, with everything synced and
// a prefix of the rest.
func TestPowerCutKeepsAPrefix(t *testing.T) {
	ctx := t.Context()
	var d disk
	w := openWatched(t, t.TempDir(), &d)
	_, err := w.CreateRun(ctx, world.Run{ID: "r", Workflow: "wf", Status: world.StatusRunning}, nil)
	check(t, "CreateRun", err)
	lease := world.Lease{Owner: "inv", Until: time.Now().Add(time.Minute)}
	_, err = w.AcquireLease(ctx, "r", lease, time.Now())
	check(t, "AcquireLease", err)
	synced, _ := d.now(t)
	const steps = 5
	for i := range steps {
		_, err := w.AppendLeased(ctx, lease.Owner, "r", int64(i+1), []world.Event{{Type: world.StepCompleted}}, nil)
		check(t, "AppendLeased", err)
	}
	var kept []int
	for cut, img := range cutsSince(t, w, synced) {
		w := reboot(t, img)
		evs, err := w.Events(ctx, "r", 0)
		check(t, "Events after the cut", err)
		for i, e := range evs {
			if e.Slot != int64(i+1) {
				t.Fatalf("cut at byte %d: event %d has slot %d, not a prefix", cut, i, e.Slot)
			}
		}
		kept = append(kept, len(evs))
	}
	if kept[0] != 0 || kept[len(kept)-1] != steps {
		t.Fatalf("events kept by cuts from the last fsync to the WAL's end: %v; want 0 first and %d last", kept, steps)
	}
}

// cutsSince returns, by the WAL's length each keeps, what power cuts
// between the fsync that made synced and now may leave: the WAL cut at
// every half frame written since, and whole.
func cutsSince(t *testing.T, w *World, synced image) iter.Seq2[int, image] {
	t.Helper()
	all, err := readImage(strings.TrimSuffix(w.dur.wal, "-wal"))
	check(t, "read the WAL", err)
	if !bytes.HasPrefix(all.wal, synced.wal) {
		t.Fatal("the WAL was rewritten since the fsync (a checkpoint restarted it): the cuts would not be prefixes")
	}
	frame := 24 + int(binary.BigEndian.Uint32(all.wal[8:12])) // header, then the page
	return func(yield func(int, image) bool) {
		for cut := len(synced.wal); cut < len(all.wal)+frame/2; cut += frame / 2 {
			cut = min(cut, len(all.wal))
			if !yield(cut, image{db: all.db, wal: all.wal[:cut]}) {
				return
			}
		}
	}
}

// TestPowerCutAfterUnsyncedRead reads a run's end and its stream with the
// unsynced reads (world.UnsyncedReader), as the engine does at a run's
// end, and then writes what follows from them: the stream's close, the
// parent's event. The reads sync nothing, so a power cut right after them
// loses the end (the control); a power cut after any of the writes that
// follow keeps it, wherever in the WAL it cuts.
func TestPowerCutAfterUnsyncedRead(t *testing.T) {
	ctx := t.Context()
	var d disk
	w := openWatched(t, t.TempDir(), &d)
	_, err := w.CreateRun(ctx, world.Run{ID: "parent", Workflow: "wf", Status: world.StatusRunning}, nil)
	check(t, "CreateRun of the parent", err)
	check(t, "WriteStream", w.WriteStream(ctx, "s", [][]byte{[]byte("a")}))
	runToUnsyncedEnd(t, &d, w, "child")
	synced, before := d.now(t)

	r, err := w.GetRunUnsynced(ctx, "child")
	check(t, "GetRunUnsynced", err)
	chunks, _, err := w.ReadStreamUnsynced(ctx, "s", 0)
	check(t, "ReadStreamUnsynced", err)
	if r.Status != world.StatusCompleted || len(chunks) != 1 {
		t.Fatalf("the unsynced reads returned a run %s and %d chunks", r.Status, len(chunks))
	}
	if d.last() != before {
		t.Fatal("an unsynced read fsynced")
	}
	survives(t, &d, "the unsynced reads", nil, hasStatus("child", world.StatusCompleted))

	check(t, "CloseStream", w.CloseStream(ctx, "s"))
	closedKept := false
	for cut, img := range cutsSince(t, w, synced) {
		after := reboot(t, img)
		if hasChunks("s", 1, true)(ctx, after) != nil {
			continue
		}
		closedKept = true
		if err := hasStatus("child", world.StatusCompleted)(ctx, after); err != nil {
			t.Errorf("a power cut at byte %d of the WAL kept the stream's close and lost the end it followed: %v", cut, err)
		}
	}
	if !closedKept {
		t.Fatal("no cut, not even the whole WAL, kept the stream's close")
	}
	_, err = w.AppendEvents(ctx, "parent", 1, []world.Event{{Type: world.ChildCompleted, CorrelationID: "child"}}, nil)
	check(t, "the parent's event", err)
	survives(t, &d, "the parent's event", []survivor{
		hasEvent("parent", "child"), hasStatus("child", world.StatusCompleted), hasChunks("s", 1, true),
	}, nil)
}

func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestPowerCutTwoOpenings has two Worlds on one directory, as a worker and
// a CLI or client process beside it: the worker (a) serves the queue and
// ends a run under its lease without syncing; the other (b) reads the end,
// and since its fences know nothing of a's writes it syncs before it
// returns it. Then resumes race from both, each following the log as the
// engine does: every resume takes its own slot, and each one acknowledged
// is in the power cut taken as it returned.
func TestPowerCutTwoOpenings(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	var d disk
	a, b := openWatched(t, dir, &d), openWatched(t, dir, &d)

	check(t, "a serves the queue", a.claimQueue())
	runToUnsyncedEnd(t, &d, a, "done")
	r, err := b.GetRun(ctx, "done")
	check(t, "GetRun in b", err)
	if b.dur.serving.Load() {
		t.Fatal("b counts as serving the queue")
	}
	if r.Status != world.StatusCompleted {
		t.Fatalf("b sees the run %s", r.Status)
	}
	survives(t, &d, "b's GetRun of the end", []survivor{hasStatus("done", world.StatusCompleted)}, nil)

	_, err = a.CreateRun(ctx, world.Run{ID: "r", Workflow: "wf", Status: world.StatusRunning}, nil)
	check(t, "CreateRun", err)
	const resumers = 8
	acks := make([]int, resumers) // the image a power cut at each ack leaves
	var wg sync.WaitGroup
	for i := range resumers {
		w := []*World{a, b}[i%2]
		wg.Go(func() {
			if err := resumeAtEnd(ctx, w, "r", fmt.Sprint("resume-", i)); err != nil {
				t.Error(err)
				return
			}
			acks[i] = d.last()
		})
	}
	wg.Wait()
	evs, err := a.Events(ctx, "r", 0)
	check(t, "Events", err)
	if len(evs) != resumers {
		t.Fatalf("%d racing resumes left %d events: %+v", resumers, len(evs), evs)
	}
	for i, img := range acks {
		w := reboot(t, d.image(img))
		if err := hasEvent("r", fmt.Sprint("resume-", i))(ctx, w); err != nil {
			t.Errorf("resume %d, acknowledged, then a power cut: %v", i, err)
		}
	}
}

// resumeAtEnd appends one event at the end of the run's log without a
// lease, following other writers' appends.
func resumeAtEnd(ctx context.Context, w *World, runID, corr string) error {
	r, err := w.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	for from := r.LastSlot + 1; ; {
		missed, err := w.AppendEvents(ctx, runID, from, []world.Event{{Type: world.HookReceived, CorrelationID: corr}}, nil)
		if !errors.Is(err, world.ErrSlotTaken) {
			return err
		}
		from = missed[len(missed)-1].Slot + 1
	}
}

// TestPowerCutAfterRestart has a process end a run and die before any
// fsync: its commit is in the page cache, not on disk. The World opened
// next serves the queue and so trusts its fences, which know nothing of
// that commit; it syncs the WAL once as it opens, so the end it hands on
// survives a power cut.
func TestPowerCutAfterRestart(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	var d disk
	dead := openWatched(t, dir, &d)
	runToUnsyncedEnd(t, &d, dead, "r")

	next := openWatched(t, dir, &d)
	_, err := next.Receive(ctx, time.Minute)
	check(t, "Receive", err)
	if !next.dur.serving.Load() {
		t.Fatal("the World that received does not count as serving the queue")
	}
	r, err := next.GetRun(ctx, "r")
	check(t, "GetRun", err)
	if r.Status != world.StatusCompleted {
		t.Fatalf("the run is %s", r.Status)
	}
	survives(t, &d, "GetRun after the restart", []survivor{hasStatus("r", world.StatusCompleted)}, nil)
}

// runToUnsyncedEnd starts a run on w and ends it under a lease, and checks
// that the end is not yet durable.
func runToUnsyncedEnd(t *testing.T, d *disk, w *World, id string) {
	t.Helper()
	ctx := t.Context()
	_, err := w.StartRun(ctx, world.Run{ID: id, Workflow: "wf", Status: world.StatusPending}, nil, world.Message{RunID: id})
	check(t, "StartRun", err)
	lease := world.Lease{Owner: "inv", Until: time.Now().Add(time.Minute)}
	_, err = w.AcquireLease(ctx, id, lease, time.Now())
	check(t, "AcquireLease", err)
	_, err = w.AppendLeased(ctx, lease.Owner, id, 1, []world.Event{{Type: world.RunCompleted}}, &world.RunUpdate{Status: world.StatusCompleted})
	check(t, "the run's end", err)
	survives(t, d, "the run's end", nil, hasStatus(id, world.StatusCompleted))
}
