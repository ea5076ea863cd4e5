package local

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// One process serves a directory's queue; others (the CLI cancelling a run,
// a second client) may read and write beside it. Two mechanisms make that
// safe and prompt.

// claimQueue runs before a World's first Receive. It takes an exclusive
// lock on the directory's queue, so a second worker process fails clearly
// instead of competing, and then releases every message a dead process had
// received but not acknowledged, and every run lease its invocations held:
// without it, a run that was mid-step when its worker was killed would
// wait out the whole visibility timeout, then the lease.
func (w *World) claimQueue() error {
	w.queueOnce.Do(func() {
		f, err := os.OpenFile(filepath.Join(w.dir, "queue.lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			w.queueErr = fmt.Errorf("local: %w", err)
			return
		}
		if err := lockExclusive(f); err != nil {
			f.Close()
			w.queueErr = fmt.Errorf("local: another process is already serving the queue in %s (run one worker per directory): %w", w.dir, err)
			return
		}
		w.queueLock = f // held, and so locked, until Close
		w.queueErr = w.write(func(s *writeStmts) error {
			now := w.clock.Now().UnixNano()
			if _, err := s.releaseInflight.Exec(now); err != nil {
				return err
			}
			return w.releaseDeadLeases(s)
		})
		if w.queueErr == nil {
			w.dur.serving.Store(true)
			w.startSweeping()
		}
	})
	return w.queueErr
}

// crossProcessInterval is how often a World looks for commits made by
// another process, whose writes do not fire this process's signals.
const crossProcessInterval = 250 * time.Millisecond

// watchOtherProcesses wakes every waiter when another process has committed
// to the database, so a cancellation or a hook resume written by another
// process reaches a waiting worker within crossProcessInterval. Waiters
// re-check their condition when woken.
//
// It asks the writer connection for SQLite's data_version, which changes
// only when another connection has committed: this World's own commits,
// which wake their waiters themselves, do not count. The writer rather
// than a connection of the reader pool, which the watch would hold for the
// World's life: with one reader left, every read would wait for it.
//
// It reads the first data_version before it returns and watches in the
// background from there: read later, a commit made between Open and that
// read would never wake anyone.
func (w *World) watchOtherProcesses() {
	last, err := w.dataVersion()
	if err != nil {
		return
	}
	w.background.Go(func() { w.watchDataVersion(last) })
}

func (w *World) watchDataVersion(last int64) {
	tick := time.NewTicker(crossProcessInterval)
	defer tick.Stop()
	for {
		select {
		case <-w.closed:
			return
		case <-tick.C:
		}
		version, err := w.dataVersion()
		if err != nil {
			continue
		}
		if version != last {
			w.slots.reset() // the other process's appends are not in it
			w.fresh.reset()
			w.signals.fireAll()
		}
		last = version
	}
}

// dataVersion reads the writer connection's data_version.
func (w *World) dataVersion() (version int64, err error) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return version, w.ws.dataVersion.QueryRow().Scan(&version)
}
