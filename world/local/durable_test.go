package local

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// withFsync has the World sync its WAL with fsync.
func withFsync(fsync func(*os.File) error) Option { return func(cfg *config) { cfg.fsync = fsync } }

// countingSyncs counts the WAL fsyncs of the World it is given to.
func countingSyncs(n *atomic.Int64) Option {
	return withFsync(func(f *os.File) error {
		n.Add(1)
		return f.Sync()
	})
}

// syncStep is one call of TestWhichCallsSync and the fsyncs a full-sync
// World makes for it.
type syncStep struct {
	call  string
	syncs int64
	do    func(ctx context.Context, w *World) error
}

// TestWhichCallsSync makes each kind of call in turn and counts the
// fsyncs: a full-sync World fsyncs once for each call that acknowledges a
// write, and for each read that returns a run's end or a stream's chunks
// not yet synced; nothing else fsyncs, and the default World never does.
func TestWhichCallsSync(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		full bool
	}{{"default", nil, false}, {"full sync", []Option{WithFullSync()}, true}} {
		t.Run(c.name, func(t *testing.T) {
			var syncs atomic.Int64
			w, err := Open(t.TempDir(), append(c.opts, countingSyncs(&syncs))...)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			ctx := t.Context()
			for _, s := range syncSteps() {
				before := syncs.Load()
				if err := s.do(ctx, w); err != nil {
					t.Fatalf("%s: %v", s.call, err)
				}
				want := s.syncs
				if !c.full {
					want = 0
				}
				if got := syncs.Load() - before; got != want {
					t.Errorf("%s: %d fsyncs, want %d", s.call, got, want)
				}
			}
		})
	}
}

func syncSteps() []syncStep {
	at := time.Now()
	lease := world.Lease{Owner: "inv", Until: at.Add(time.Minute)}
	step := []world.Event{{Type: world.StepCreated, CorrelationID: "s1"}}
	var d world.Delivery
	return []syncStep{
		{"StartRun", 1, func(ctx context.Context, w *World) error {
			_, err := w.StartRun(ctx, world.Run{ID: "r1", Workflow: "wf", Status: world.StatusPending}, nil, world.Message{RunID: "r1"})
			return err
		}},
		{"CreateRun", 1, func(ctx context.Context, w *World) error {
			_, err := w.CreateRun(ctx, world.Run{ID: "r2", Workflow: "wf", Status: world.StatusRunning}, nil)
			return err
		}},
		{"Receive", 0, func(ctx context.Context, w *World) (err error) {
			d, err = w.Receive(ctx, time.Minute)
			return err
		}},
		{"AcquireLease", 0, func(ctx context.Context, w *World) error {
			_, err := w.AcquireLease(ctx, "r1", lease, at)
			return err
		}},
		{"AppendLeased (a step)", 0, func(ctx context.Context, w *World) error {
			_, err := w.AppendLeased(ctx, lease.Owner, "r1", 1, step, &world.RunUpdate{Status: world.StatusRunning})
			return err
		}},
		{"RenewLease", 0, func(ctx context.Context, w *World) error { return w.RenewLease(ctx, "r1", lease) }},
		{"ClaimHook", 0, func(ctx context.Context, w *World) error {
			_, err := w.ClaimHook(ctx, world.Hook{Token: "tok", RunID: "r1", CorrelationID: "h1"}, false)
			return err
		}},
		{"GetRun of a running run", 0, func(ctx context.Context, w *World) error { _, err := w.GetRun(ctx, "r1"); return err }},
		{"Events of a running run", 0, func(ctx context.Context, w *World) error { _, err := w.Events(ctx, "r1", 0); return err }},
		{"WriteStream", 0, func(ctx context.Context, w *World) error { return w.WriteStream(ctx, "s", [][]byte{[]byte("a")}) }},
		{"ReadStream of unsynced chunks", 1, readStream},
		{"ReadStream of synced chunks", 0, readStream},
		{"CloseStream", 0, func(ctx context.Context, w *World) error { return w.CloseStream(ctx, "s") }},
		{"ReadStreamUnsynced of an unsynced close", 0, func(ctx context.Context, w *World) error {
			_, _, err := w.ReadStreamUnsynced(ctx, "s", 0)
			return err
		}},
		{"ReadStream of an unsynced close", 1, readStream},
		{"ReadStream of an empty stream", 0, func(ctx context.Context, w *World) error {
			_, _, err := w.ReadStream(ctx, "empty", 0)
			return err
		}},
		{"DisposeHook", 0, func(ctx context.Context, w *World) error { return w.DisposeHook(ctx, "tok", "r1", time.Time{}) }},
		{"AppendEvents without a lease (a resume)", 1, func(ctx context.Context, w *World) error {
			_, err := w.AppendEvents(ctx, "r2", 1, step, nil)
			return err
		}},
		{"AppendEvents without a lease at a taken slot, all synced", 0, func(ctx context.Context, w *World) error {
			_, err := w.AppendEvents(ctx, "r2", 1, step, nil)
			return ignoreErr(err, world.ErrSlotTaken)
		}},
		{"Enqueue", 1, func(ctx context.Context, w *World) error { return w.Enqueue(ctx, world.Message{RunID: "r2"}) }},
		{"Ack", 0, func(ctx context.Context, w *World) error { return w.Ack(ctx, d) }},
		{"Release", 0, func(ctx context.Context, w *World) error { return w.Release(ctx, d) }},
		{"AppendLeased (the run's end)", 0, func(ctx context.Context, w *World) error {
			_, err := w.AppendLeased(ctx, lease.Owner, "r1", 2, []world.Event{{Type: world.RunCompleted}},
				&world.RunUpdate{Status: world.StatusCompleted})
			return err
		}},
		{"ReleaseLease", 0, func(ctx context.Context, w *World) error {
			_, err := w.ReleaseLease(ctx, "r1", world.Release{Owner: lease.Owner})
			return err
		}},
		{"GetRunUnsynced of an unsynced end", 0, func(ctx context.Context, w *World) error { _, err := w.GetRunUnsynced(ctx, "r1"); return err }},
		{"GetRun of an unsynced end", 1, func(ctx context.Context, w *World) error { _, err := w.GetRun(ctx, "r1"); return err }},
		{"GetRun of a synced end", 0, func(ctx context.Context, w *World) error { _, err := w.GetRun(ctx, "r1"); return err }},
		{"Events of a synced end", 0, func(ctx context.Context, w *World) error { _, err := w.Events(ctx, "r1", 0); return err }},
		{"AppendLeased (another run's end)", 0, endRun("r2", 2)},
		{"Events of an unsynced end", 1, func(ctx context.Context, w *World) error { _, err := w.Events(ctx, "r2", 0); return err }},
		{"CreateRun of a third run", 1, func(ctx context.Context, w *World) error {
			_, err := w.CreateRun(ctx, world.Run{ID: "r3", Workflow: "wf", Status: world.StatusRunning}, nil)
			return err
		}},
		{"AppendLeased (the third run's end)", 0, endRun("r3", 1)},
		{"ListRuns with an unsynced end", 1, func(ctx context.Context, w *World) error {
			_, err := w.ListRuns(ctx, world.RunFilter{})
			return err
		}},
		{"Sweep", 0, func(ctx context.Context, w *World) error { _, err := w.Sweep(ctx, 10); return err }},
	}
}

func readStream(ctx context.Context, w *World) error {
	_, _, err := w.ReadStream(ctx, "s", 0)
	return err
}

// endRun ends run id, whose next slot is from, under a lease of its own.
func endRun(id string, from int64) func(ctx context.Context, w *World) error {
	return func(ctx context.Context, w *World) error {
		lease := world.Lease{Owner: "end-" + id, Until: time.Now().Add(time.Minute)}
		if _, err := w.AcquireLease(ctx, id, lease, time.Now()); err != nil {
			return err
		}
		_, err := w.AppendLeased(ctx, lease.Owner, id, from, []world.Event{{Type: world.RunCompleted}},
			&world.RunUpdate{Status: world.StatusCompleted})
		return err
	}
}

func ignoreErr(err, want error) error {
	if err != nil && !errors.Is(err, want) {
		return err
	}
	return nil
}

// TestGroupCommit makes eight acknowledging calls at once, holding the
// first fsync until all eight have committed: the calls share at most two
// fsyncs (the first, which may have begun before the others committed, and
// one for everything after it).
func TestGroupCommit(t *testing.T) {
	const callers = 8
	var (
		w     *World
		base  uint64
		armed atomic.Bool // once the callers start
		syncs atomic.Int64
	)
	w, err := Open(t.TempDir(), WithFullSync(), withFsync(func(f *os.File) error {
		if armed.Load() && syncs.Add(1) == 1 {
			for w.dur.committed.Load() < base+callers {
				time.Sleep(time.Millisecond)
			}
		}
		return f.Sync()
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	base = w.dur.committed.Load()
	armed.Store(true)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if err := w.Enqueue(t.Context(), world.Message{RunID: "r", DedupKey: string(rune('a' + i))}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := syncs.Load(); n < 1 || n > 2 {
		t.Fatalf("%d acknowledging calls at once made %d fsyncs, want 1 or 2", callers, n)
	}
}

// TestWakesBeforeTheFsync holds StartRun's fsync until a worker already
// waiting in Receive has the run's message: the worker is woken at the
// commit, so the run's work does not wait for the fsync.
func TestWakesBeforeTheFsync(t *testing.T) {
	received := make(chan struct{})
	var armed atomic.Bool
	w, err := Open(t.TempDir(), WithFullSync(), withFsync(func(f *os.File) error {
		if armed.Load() {
			select {
			case <-received:
			case <-time.After(10 * time.Second):
				return errors.New("the worker was not woken before the fsync")
			}
		}
		return f.Sync()
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := t.Context()
	check(t, "claim the queue", w.claimQueue())
	go func() {
		if _, err := w.Receive(ctx, time.Minute); err == nil {
			close(received)
		}
	}()
	for !waiting(w, queueTopic) {
		time.Sleep(time.Millisecond)
	}
	armed.Store(true)
	_, err = w.StartRun(ctx, world.Run{ID: "r", Workflow: "wf", Status: world.StatusPending}, nil, world.Message{RunID: "r"})
	check(t, "StartRun", err)
}

// waiting reports whether anything waits on t.
func waiting(w *World, t topic) bool {
	w.signals.mu.Lock()
	defer w.signals.mu.Unlock()
	return w.signals.waiting[t] != nil
}

// TestNotServingSyncsEachRead opens a second World beside the one serving
// the queue: it cannot know whether the runs' ends and chunks it reads
// are synced, so each read that returns one fsyncs, once however many it
// returns; a read that returns none does not.
func TestNotServingSyncsEachRead(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	a, err := Open(dir, WithFullSync())
	check(t, "Open a", err)
	defer a.Close()
	check(t, "a serves the queue", a.claimQueue())
	for _, id := range []string{"r1", "r2"} {
		_, err := a.CreateRun(ctx, world.Run{ID: id, Workflow: "wf", Status: world.StatusRunning}, nil)
		check(t, "CreateRun", err)
		check(t, "end "+id, endRun(id, 1)(ctx, a))
	}
	check(t, "CreateRun", ignore(a.CreateRun(ctx, world.Run{ID: "r3", Workflow: "wf", Status: world.StatusRunning}, nil)))
	check(t, "WriteStream", a.WriteStream(ctx, "s", [][]byte{[]byte("a")}))

	var syncs atomic.Int64
	b, err := Open(dir, WithFullSync(), countingSyncs(&syncs))
	check(t, "Open b", err)
	defer b.Close()
	for _, s := range []syncStep{
		{"ListRuns with two ended runs", 1, func(ctx context.Context, w *World) error {
			_, err := w.ListRuns(ctx, world.RunFilter{})
			return err
		}},
		{"ListRuns of running runs", 0, func(ctx context.Context, w *World) error {
			_, err := w.ListRuns(ctx, world.RunFilter{Status: world.StatusRunning})
			return err
		}},
		{"GetRun of an ended run", 1, func(ctx context.Context, w *World) error { _, err := w.GetRun(ctx, "r1"); return err }},
		{"GetRun of it again", 1, func(ctx context.Context, w *World) error { _, err := w.GetRun(ctx, "r1"); return err }},
		{"GetRun of a running run", 0, func(ctx context.Context, w *World) error { _, err := w.GetRun(ctx, "r3"); return err }},
		{"ReadStream", 1, readStream},
	} {
		before := syncs.Load()
		check(t, s.call, s.do(ctx, b))
		if got := syncs.Load() - before; got != s.syncs {
			t.Errorf("%s: %d fsyncs, want %d", s.call, got, s.syncs)
		}
	}
}

func ignore[T any](_ T, err error) error { return err }
