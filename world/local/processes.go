package local

import (
	"context"
	"database/sql"
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
// to the database (SQLite's data_version changes), so a cancellation or a
// hook resume written by another process reaches a waiting worker within
// crossProcessInterval. Waiters re-check their condition when woken.
//
// It reads the first data_version before it returns and watches in the
// background from there: read later, a commit made between Open and that
// read would never wake anyone.
func (w *World) watchOtherProcesses() {
	ctx := context.Background()
	conn, err := w.rdb.Conn(ctx)
	if err != nil {
		return
	}
	var last int64
	if conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&last) != nil {
		conn.Close()
		return
	}
	w.background.Go(func() { w.watchDataVersion(conn, last) })
}

func (w *World) watchDataVersion(conn *sql.Conn, last int64) {
	ctx := context.Background()
	defer conn.Close()
	tick := time.NewTicker(crossProcessInterval)
	defer tick.Stop()
	for {
		select {
		case <-w.closed:
			return
		case <-tick.C:
		}
		var version int64
		if conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version) != nil {
			continue
		}
		if version != last {
			w.slots.reset() // the other process's appends are not in it
			w.signals.fireAll()
		}
		last = version
	}
}
