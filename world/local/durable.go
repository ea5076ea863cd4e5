package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// durability makes a full-sync World's commits durable when, and only
// when, they are acknowledged: every commit is written at
// synchronous=NORMAL (appended to the WAL, not fsynced), and the WAL is
// fsynced before a call that acknowledges a write returns, and before a
// read returns a run's end or a stream's chunks (see WithFullSync for
// the contract). The WAL is one file written in commit order and SQLite's
// recovery stops at the first frame that is not intact, so a power cut
// loses only a suffix of commits, and one fsync makes every commit before
// it durable: concurrent callers share it (group commit).
//
// Readers learn what they must wait for from fences: a write whose result
// a reader may hand on (a run's end, a stream chunk) records its commit's
// number under the run's or the stream's topic before it commits, so any
// reader that sees the write finds the fence and syncs past it first.
// Fences are kept in memory, so they only tell of this World's writes.
// Runs write their ends and chunks in the World that serves the
// directory's queue (their invocations run there); any other World (a CLI,
// a client in another process) cannot know whether such a write is synced,
// and syncs before every read that returns one.
type durability struct {
	on bool // WithFullSync; off, every method does nothing
	// serving is set once this World serves the queue: from then on the
	// run ends and chunks it reads are its own writes, and its fences
	// tell which are not yet synced.
	serving atomic.Bool

	// committed counts the writer's commits; it is incremented, under
	// World.wmu, once a commit has been written to the WAL.
	committed atomic.Uint64
	// synced is the highest count of commits known to be on disk.
	synced atomic.Uint64

	syncMu sync.Mutex           // one fsync at a time; those queued behind it usually find their commits synced
	wal    string               // the WAL's path
	walF   *os.File             // opened at the first sync, with its directory synced
	fsync  func(*os.File) error // (*os.File).Sync but in tests

	fenceMu sync.Mutex
	fences  map[topic]uint64 // topic → the commit its readers wait for; entries synced are removed
}

func newDurability(dbPath string, on bool, fsync func(*os.File) error) *durability {
	return &durability{on: on, wal: dbPath + "-wal", fsync: fsync, fences: map[topic]uint64{}}
}

// syncOnOpen makes durable whatever the WAL holds when the World opens:
// commits of a process that died before it synced them are in the page
// cache, and this World reads them as it reads synced ones (no fence
// tells of them).
func (d *durability) syncOnOpen() error {
	if !d.on {
		return nil
	}
	return d.sync()
}

// fenceNext makes readers of t wait until the commit being made is
// durable. The caller holds World.wmu, inside the transaction, so the
// fence is in place before any reader can see the commit.
func (d *durability) fenceNext(t topic) {
	if !d.on {
		return
	}
	d.fenceMu.Lock()
	defer d.fenceMu.Unlock()
	d.fences[t] = d.committed.Load() + 1
}

// awaitFence syncs, if a write to any of ts that a reader saw may not be
// durable yet: once, however many. Readers call it after they read.
func (d *durability) awaitFence(ts ...topic) error {
	if !d.on || len(ts) == 0 {
		return nil
	}
	if !d.serving.Load() {
		return d.sync() // perhaps another process's writes, synced or not
	}
	var n uint64 // no fence: synced already, or written by no run of this World
	d.fenceMu.Lock()
	for _, t := range ts {
		n = max(n, d.fences[t])
	}
	d.fenceMu.Unlock()
	return d.syncTo(n)
}

// syncAll makes every commit made so far durable: the caller's own,
// before it acknowledges it.
func (d *durability) syncAll() error {
	if !d.on {
		return nil
	}
	return d.syncTo(d.committed.Load())
}

// syncTo returns once commit n is durable. Commit n has been written to
// the WAL by the time anyone asks for it (its writer is done, or a reader
// saw it), so an fsync begun now covers it, even in the moment before its
// writer has counted it in committed.
func (d *durability) syncTo(n uint64) error {
	if d.synced.Load() >= n {
		return nil
	}
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	if d.synced.Load() >= n {
		return nil // the fsync this call waited behind covered it
	}
	return d.syncLocked()
}

// sync fsyncs the WAL now, whatever this World has counted: for a write
// another process made.
func (d *durability) sync() error {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	return d.syncLocked()
}

// syncLocked fsyncs the WAL; the caller holds syncMu.
func (d *durability) syncLocked() error {
	upTo := d.committed.Load() // every commit counted here is in the WAL already
	if err := d.syncWAL(); err != nil {
		return fmt.Errorf("local: sync %s: %w", d.wal, err)
	}
	d.synced.Store(upTo)
	d.dropFences(upTo)
	return nil
}

// syncWAL fsyncs the WAL; the caller holds syncMu. SQLite creates the WAL
// with the first connection and deletes it only when the last one closes,
// so the file opened once stays the WAL until Close. Its directory is
// synced once too: the file may be new, and a name not yet on disk would
// lose the file with it.
func (d *durability) syncWAL() error {
	if d.walF == nil {
		f, err := os.OpenFile(d.wal, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(d.wal)); err != nil {
			f.Close()
			return err
		}
		d.walF = f
	}
	return d.fsync(d.walF)
}

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // NTFS journals its directories; a directory handle cannot be flushed
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (d *durability) dropFences(upTo uint64) {
	d.fenceMu.Lock()
	defer d.fenceMu.Unlock()
	for t, n := range d.fences {
		if n <= upTo {
			delete(d.fences, t)
		}
	}
}

// close syncs what is left and closes the WAL's handle. Nothing commits
// any more: the caller holds World.wmu.
func (d *durability) close() error {
	err := d.syncAll()
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	if d.walF != nil {
		err = errors.Join(err, d.walF.Close())
		d.walF = nil
	}
	return err
}
