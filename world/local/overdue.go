package local

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// dueAtCreation is a new run's due time: now, since its first message
// follows; none for a run created finished.
func dueAtCreation(run world.Run, now time.Time) any {
	if run.Status.Terminal() {
		return nil
	}
	return timeArg(now)
}

// OverdueRuns implements world.Overdue with one query on the partial
// index of runs with a due time.
func (w *World) OverdueRuns(ctx context.Context, before, now time.Time, limit int) ([]world.OverdueRun, error) {
	rows, err := w.rdb.QueryContext(readContext(ctx), `SELECT id, next_slot - 1, due_at, coalesce(requeued_slot = next_slot - 1, 0)
		FROM runs INDEXED BY runs_due
		WHERE due_at IS NOT NULL AND due_at < ?1 AND finished = 0 AND (lease_owner IS NULL OR lease_until <= ?2)
		ORDER BY due_at LIMIT ?3`, before.UnixNano(), now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("local: overdue runs: %w", err)
	}
	defer rows.Close()
	var found []world.OverdueRun
	for rows.Next() {
		var r world.OverdueRun
		var due sql.NullInt64
		if err := rows.Scan(&r.RunID, &r.LastSlot, &due, &r.Requeued); err != nil {
			return nil, fmt.Errorf("local: overdue runs: %w", err)
		}
		r.Due = timeCol(due)
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("local: overdue runs: %w", err)
	}
	return found, nil
}

// MarkRequeued implements world.Overdue with one conditional update.
func (w *World) MarkRequeued(ctx context.Context, run world.OverdueRun, now time.Time) error {
	err := w.write(func(s *writeStmts) error {
		res, err := w.wconn.ExecContext(ctx, `UPDATE runs SET due_at = ?4, requeued_slot = ?2
			WHERE id = ?1 AND next_slot - 1 = ?2 AND due_at = ?3 AND finished = 0 AND (lease_owner IS NULL OR lease_until <= ?4)`,
			run.RunID, run.LastSlot, run.Due.UnixNano(), now.UnixNano())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		if _, _, err := leaseOf(s, run.RunID); err != nil {
			return err
		}
		return world.ErrNotOverdue
	})
	if err != nil {
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, err)
	}
	return nil
}
