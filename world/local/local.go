// Package local is the embedded default World: one process, no services,
// everything durable in one SQLite database in a directory (callers default
// to .workflow-data).
//
// SQLite (modernc.org/sqlite, pure Go, so no cgo) rather than bbolt: its
// indexes serve ListRuns' filters and the queue's due order without
// hand-built index buckets, and in WAL mode a commit appends to one file
// where bbolt rewrites pages and fsyncs twice per commit.
//
// Durability: WAL mode with synchronous=NORMAL. A commit has been written
// to the WAL file before the call returns, so it survives kill -9 of the
// process; a power cut or kernel crash can lose the last commits since a
// checkpoint, never corrupt the database. Checkpoints run in the
// background (checkpoint.go), never inside a commit. WithFullSync makes
// every write that a call acknowledges survive a power cut too, fsyncing
// the WAL only when a call acknowledges something (durable.go) rather than
// at every commit.
//
// All writes go through one connection, serialised by a mutex, with
// prepared statements and one short IMMEDIATE transaction per call; reads
// use a small pool of their own, which WAL lets run beside the writer. A
// read holds its connection only while it reads, never while it waits for
// another or for anything else, so no size of that pool can deadlock.
// Waiters (Receive, WaitEvents, WaitStream) are woken in-process by the
// writes that concern them, so they never poll. Writes by another process
// sharing the directory are therefore not noticed until a waiter checks
// again for another reason: run one process per directory.
package local

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/world"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Clock tells the World what time it is. The default is the wall clock.
type Clock interface {
	Now() time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Option configures a World.
type Option func(*config)

type config struct {
	clock     Clock
	fullSync  bool
	fsync     func(*os.File) error // syncs the WAL; tests replace it to watch what each fsync covers
	existing  bool
	retention time.Duration
	readers   int // the reader pool's connections; tests shrink it to catch a read that waits for a second one
}

// readerConns is the reader pool's size: enough for a worker's reads to
// run beside each other; each connection keeps its own page cache.
const readerConns = 4

// WithClock replaces the wall clock, for tests that control time. Waiters
// sleep on real timers for the clock's differences, so a test that moves
// the clock should also call again whatever waits on it.
func WithClock(c Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithFullSync makes what the World acknowledges survive a power cut or a
// kernel crash, not only kill -9. Commits are still written to the WAL
// without an fsync; the WAL is fsynced, one fsync shared by the callers
// waiting at that moment, before a call returns that acknowledges a write
// to someone outside a run: CreateRun and StartRun, an append made without
// a lease (a hook resume, a cancellation, a child reporting to its
// parent), Enqueue. A run's end and a stream's chunks, written by the
// run itself, are fsynced before a read returns them (GetRun, ListRuns,
// Events, ReadStream; not GetRunUnsynced and ReadStreamUnsynced, the
// engine's reads at a run's end, which it acts on only by writing here
// after them). What a run writes for itself (its steps' events,
// leases, hooks, the queue's receipts and acks) is not fsynced on its own:
// the WAL keeps a prefix of the commits after a power cut, so the run
// resumes from an earlier point of its log, as after kill -9 in a step.
// An acknowledging call wakes the run's worker before it waits for the
// fsync, so the run's work never waits for one; a power cut in between
// takes the unacknowledged start or resume, which its caller retries.
func WithFullSync() Option { return func(cfg *config) { cfg.fullSync = true } }

// WithExisting opens only a World that is already there: a directory
// holding none is an error matching fs.ErrNotExist, not a new empty World.
// Tools that read a World (the workflow command) use it, so that a
// mistyped directory is reported instead of showing no runs.
func WithExisting() Option { return func(cfg *config) { cfg.existing = true } }

// World is a world.World and world.Notifier stored in a SQLite database.
type World struct {
	clock     Clock
	retention time.Duration // of finished runs (sweep.go)
	// background holds the World's goroutines (the sweeper, the watch
	// for other processes' commits); Close waits for them before it
	// closes the databases, so no connection outlives it.
	background sync.WaitGroup
	lifeMu     sync.Mutex // orders starting the sweeper against Close's Wait
	id         string     // this Open of the directory, recorded with the leases it grants

	wmu   sync.Mutex // serialises the writer connection and its statements
	wconn *sql.Conn
	wdb   *sql.DB
	ws    writeStmts
	dur   *durability
	fresh freshRuns // runs just started, for the worker's first read (readrun.go)
	ckpt  *checkpointer

	rdb *sql.DB
	rs  readStmts

	signals   signals
	slots     slotCache     // last slots of the runs this World wrote, for WaitEvents
	closed    chan struct{} // closed by Close, to release waiters
	closeOnce sync.Once

	dir       string
	queueOnce sync.Once
	queueLock *os.File // the directory's queue lock, once this World receives
	queueErr  error

	nextVisible visibleHint // the queue's, as the last take found it
	taken       *noted      // a take not written yet (queue.go); guarded by wmu
}

var (
	_ world.World          = (*World)(nil)
	_ world.Notifier       = (*World)(nil)
	_ world.UnsyncedReader = (*World)(nil)
)

// errClosed is returned to waiters when the World is closed under them.
var errClosed = errors.New("local: world closed")

// Open opens the World stored in dir, creating the directory and the
// database as needed.
func Open(dir string, opts ...Option) (*World, error) {
	cfg := config{clock: wallClock{}, fsync: (*os.File).Sync, readers: readerConns}
	for _, o := range opts {
		o(&cfg)
	}
	path, err := filepath.Abs(filepath.Join(dir, "world.db"))
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	if cfg.existing {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("local: no World in %s: %w", dir, err)
		}
	} else if err := createPrivate(dir, path); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	w := &World{clock: cfg.clock, retention: world.RetentionOrDefault(cfg.retention), id: rand.Text(),
		closed: make(chan struct{}), dir: dir, dur: newDurability(path, cfg.fullSync, cfg.fsync)}
	if err := w.open(path, cfg.readers); err != nil {
		w.dur.close()
		w.closeDBs()
		return nil, fmt.Errorf("local: open %s: %w", path, err)
	}
	w.watchOtherProcesses()
	go w.ckpt.run(w.closed, &w.wmu)
	return w, nil
}

func (w *World) open(path string, readers int) error {
	var err error
	// One connection: SQLite has a single writer anyway, and keeping it
	// lets the statements stay prepared.
	// The writer never checkpoints: the checkpointer does, in the
	// background. It never fsyncs a commit either: with WithFullSync the
	// durability barrier does, when a call acknowledges one.
	if w.wdb, err = sql.Open("sqlite", dsn(path, "synchronous(NORMAL)", "wal_autocheckpoint(0)")); err != nil {
		return err
	}
	w.wdb.SetMaxOpenConns(1)
	ctx := context.Background()
	if w.wconn, err = w.wdb.Conn(ctx); err != nil {
		return err
	}
	if err = migrate(ctx, w.wconn); err != nil {
		return err
	}
	if err = w.ws.prepare(ctx, w.wconn); err != nil {
		return err
	}
	if w.rdb, err = sql.Open("sqlite", dsn(path, "query_only(1)")); err != nil {
		return err
	}
	// No read waits for a second connection while it holds one (nor
	// does anything hold one for long), so any size is free of deadlock.
	w.rdb.SetMaxOpenConns(readers)
	w.rdb.SetMaxIdleConns(readers)
	if err = w.rs.prepare(ctx, w.rdb); err != nil {
		return err
	}
	if w.ckpt, err = newCheckpointer(path); err != nil {
		return err
	}
	// A process that used the directory before may have died with
	// commits not yet synced, which this World would take for synced.
	return w.dur.syncOnOpen()
}

func uri(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	if u.Path[0] != '/' { // a Windows drive letter
		u.Path = "/" + u.Path
	}
	return u.String()
}

// dsn names the database as a URI, so that any path is safe, with the
// pragmas every connection needs plus extra.
func dsn(path string, extra ...string) string {
	q := url.Values{"_pragma": append([]string{"busy_timeout(5000)", "journal_mode(WAL)"}, extra...)}
	return uri(path) + "?" + q.Encode()
}

// Close implements world.World. Waiters return an error; everything
// written stays in the directory. Closing again does nothing.
func (w *World) Close() error {
	var err error
	w.closeOnce.Do(func() {
		w.lifeMu.Lock()
		close(w.closed)
		w.lifeMu.Unlock()
		<-w.ckpt.done
		w.background.Wait()
		w.wmu.Lock()
		defer w.wmu.Unlock()
		// Synced before the last connection closes, which checkpoints
		// the WAL and deletes it.
		err = errors.Join(w.dur.close(), w.closeDBs())
		if w.queueLock != nil {
			w.queueLock.Close()
		}
	})
	return err
}

func (w *World) closeDBs() error {
	var errs []error
	if w.wconn != nil {
		errs = append(errs, w.ws.close(), w.wconn.Close())
	}
	dbs := []*sql.DB{w.rdb, w.wdb}
	if w.ckpt != nil {
		dbs = append(dbs, w.ckpt.db)
	}
	for _, db := range dbs {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// write runs f in one IMMEDIATE transaction on the writer connection: all of
// f's writes commit, or none if f fails. The statements run without the
// caller's context: they take microseconds, and interrupting one would
// only add a path to roll back.
func (w *World) write(f func(s *writeStmts) error) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.transact(f)
}

// acknowledged returns err once what a caller is about to be told is
// durable (WithFullSync): every commit so far, the call's own and any
// other's that err may tell of (the run exists, the slot is taken). Calls
// wake the waiters on what they wrote before they wait here, so that the
// run's own work (a worker receiving it) does not wait for the fsync: only
// the acknowledgement does.
func (w *World) acknowledged(err error) error {
	return errors.Join(err, w.dur.syncAll())
}

// transact runs f in a transaction; the caller holds wmu.
func (w *World) transact(f func(s *writeStmts) error) error {
	if _, err := w.ws.begin.Exec(); err != nil {
		return err
	}
	if err := errors.Join(w.writeTaken(&w.ws), f(&w.ws)); err != nil {
		_, rbErr := w.ws.rollback.Exec()
		return errors.Join(err, rbErr)
	}
	if _, err := w.ws.commit.Exec(); err != nil {
		_, rbErr := w.ws.rollback.Exec()
		return errors.Join(err, rbErr)
	}
	w.taken = nil
	w.dur.committed.Add(1)
	w.ckpt.committed()
	return nil
}

// startSweeping starts the periodic sweep unless the World is closing: a
// WaitGroup must not gain a goroutine while Close waits on it.
func (w *World) startSweeping() {
	w.lifeMu.Lock()
	defer w.lifeMu.Unlock()
	select {
	case <-w.closed:
	default:
		w.background.Go(w.sweepPeriodically)
	}
}
