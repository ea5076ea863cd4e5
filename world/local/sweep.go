package local

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var _ world.Sweeper = (*World)(nil)

// WithRetention keeps finished runs for d after they end (0:
// world.DefaultRetention, 30 days; world.KeepForever: for ever). The World
// that serves the directory's queue sweeps expired runs every
// sweepInterval; `workflow gc` sweeps on demand.
func WithRetention(d time.Duration) Option { return func(cfg *config) { cfg.retention = d } }

const (
	// sweepInterval is how often the serving World sweeps.
	sweepInterval = 10 * time.Minute
	// sweepBatch is how many runs one transaction of a sweep deletes, so
	// that a sweep holds the writer for a few milliseconds at a time.
	sweepBatch = 100
)

// sweepPeriodically sweeps until the World closes, a batch at a time.
func (w *World) sweepPeriodically() {
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		for {
			n, err := w.Sweep(context.Background(), sweepBatch)
			if err != nil {
				slog.Warn("workflow: sweeping expired runs failed", "dir", w.dir, "error", err)
			}
			if err != nil || n < sweepBatch {
				break
			}
		}
		select {
		case <-w.closed:
			return
		case <-tick.C:
		}
	}
}

// Sweep implements world.Sweeper in one transaction. A finished run's end
// is its updated_at: nothing updates a finished run.
func (w *World) Sweep(ctx context.Context, limit int) (int, error) {
	now := w.clock.Now()
	var n int
	err := w.write(func(*writeStmts) error {
		if _, err := w.wconn.ExecContext(ctx, sweepReplies, now.Add(-world.ReplyRetention).UnixNano(), now.UnixNano()); err != nil {
			return err
		}
		if w.retention == world.KeepForever {
			return nil
		}
		rows, err := w.wconn.QueryContext(ctx, `SELECT id FROM runs WHERE finished = 1 AND updated_at <= ? ORDER BY updated_at LIMIT ?`,
			now.Add(-w.retention).UnixNano(), limit)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, id := range ids {
			if err := w.deleteRun(ctx, id); err != nil {
				return fmt.Errorf("delete run %s: %w", id, err)
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("local: sweep: %w", err)
	}
	return n, nil
}

// sweepReplies deletes the closed streams that belong to no run once their
// retention (?1: closed before) has passed, and disposed hooks past theirs
// (?2: now); the names of a run's streams start with "runs/". Every hook of
// a finished run was disposed when it ended.
const sweepReplies = `
DELETE FROM stream_chunks WHERE name IN (
	SELECT name FROM streams WHERE closed = 1 AND closed_at <= ?1 AND name NOT LIKE 'runs/%');
DELETE FROM streams WHERE closed = 1 AND closed_at <= ?1 AND name NOT LIKE 'runs/%';
DELETE FROM hooks WHERE disposed = 1 AND retain_until <= ?2;`

// deleteRun deletes a run with its log and its
// streams (a range of names: the prefix up to the next character after
// its closing '/'). The caller is inside a write transaction.
func (w *World) deleteRun(ctx context.Context, id string) error {
	prefix := world.RunStreamPrefix(id)
	upper := prefix[:len(prefix)-1] + string(rune(prefix[len(prefix)-1]+1))
	_, err := w.wconn.ExecContext(ctx, `
DELETE FROM events WHERE run_id = ?1;
DELETE FROM stream_chunks WHERE name >= ?2 AND name < ?3;
DELETE FROM streams WHERE name >= ?2 AND name < ?3;
DELETE FROM runs WHERE id = ?1;`, id, prefix, upper)
	return err
}
