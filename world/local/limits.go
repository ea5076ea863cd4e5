package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow/world"
)

// StartLimited implements world.Limiter: the run, its slot (limit_slots)
// or place in its partition's queue (limit_queue, in seq order), the rate
// window (limit_rates) and its message, in one transaction.
func (w *World) StartLimited(ctx context.Context, run world.Run, first []world.Event, msg world.Message, limit world.Limit) (world.Run, error) {
	r, err := w.storeRun(run, first, &msg, func(s *writeStmts, run world.Run, msg *world.Message) (*world.Message, world.RunStatus, error) {
		return w.placeLimited(ctx, run, msg, limit)
	})
	return r, w.acknowledged(err)
}

// placeLimited gives a new run a slot of its partition, or queues it.
func (w *World) placeLimited(ctx context.Context, run world.Run, msg *world.Message, limit world.Limit) (*world.Message, world.RunStatus, error) {
	c, part := w.wconn, []any{limit.Workflow, limit.Key}
	if limit.From != "" {
		res, err := c.ExecContext(ctx, `UPDATE limit_slots SET run_id = ?3 WHERE workflow = ?1 AND key = ?2 AND run_id = ?4`,
			limit.Workflow, limit.Key, run.ID, limit.From)
		if n, _ := rowsAffected(res, err); n > 0 {
			return msg, run.Status, nil
		}
		if err != nil {
			return nil, "", err
		}
	}
	var prev world.RateWindow
	err := c.QueryRowContext(ctx, `SELECT win, count FROM limit_rates WHERE workflow = ? AND key = ?`, part...).Scan(&prev.Index, &prev.Count)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, "", err
	}
	next, at := limit.PlaceStart(prev, w.clock.Now())
	if next != prev {
		if _, err := c.ExecContext(ctx, `INSERT INTO limit_rates (workflow, key, win, count) VALUES (?, ?, ?, ?)
			ON CONFLICT (workflow, key) DO UPDATE SET win = excluded.win, count = excluded.count`,
			limit.Workflow, limit.Key, next.Index, next.Count); err != nil {
			return nil, "", err
		}
	}
	msg.DeliverAt = at
	var held int
	var waiting bool
	if err := c.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM limit_slots WHERE workflow = ?1 AND key = ?2),
		EXISTS (SELECT 1 FROM limit_queue WHERE workflow = ?1 AND key = ?2)`, part...).Scan(&held, &waiting); err != nil {
		return nil, "", err
	}
	if !waiting && limit.Admits(held) {
		if _, err := c.ExecContext(ctx, `INSERT INTO limit_slots (workflow, key, run_id) VALUES (?, ?, ?)`, limit.Workflow, limit.Key, run.ID); err != nil {
			return nil, "", err
		}
		if at.IsZero() {
			return msg, run.Status, nil
		}
		_, err := c.ExecContext(ctx, `UPDATE runs SET due_at = ? WHERE id = ?`, at.UnixNano(), run.ID)
		return msg, run.Status, err
	}
	if _, err := c.ExecContext(ctx, `INSERT INTO limit_queue (workflow, key, run_id, deliver_at, dedup_key, trace) VALUES (?, ?, ?, ?, ?, ?)`,
		limit.Workflow, limit.Key, run.ID, timeArg(at), textArg(msg.DedupKey), textArg(msg.Trace)); err != nil {
		return nil, "", err
	}
	_, err = c.ExecContext(ctx, `UPDATE runs SET status = ?, due_at = NULL WHERE id = ?`, string(world.StatusQueued), run.ID)
	return nil, world.StatusQueued, err
}

// ReleaseSlot implements world.Limiter in one transaction: the run's
// queue place, or its slot and the next queued run's admission.
func (w *World) ReleaseSlot(ctx context.Context, run world.Run, key string) error {
	var admitted bool
	err := w.write(func(s *writeStmts) error {
		c, part := w.wconn, []any{run.Workflow, key, run.ID}
		res, err := c.ExecContext(ctx, `DELETE FROM limit_queue WHERE workflow = ? AND key = ? AND run_id = ?`, part...)
		if n, err := rowsAffected(res, err); n > 0 || err != nil {
			return err
		}
		res, err = c.ExecContext(ctx, `DELETE FROM limit_slots WHERE workflow = ? AND key = ? AND run_id = ?`, part...)
		if n, err := rowsAffected(res, err); n == 0 || err != nil {
			return err
		}
		admitted, err = w.admitNext(ctx, s, run.Workflow, key)
		return err
	})
	if err != nil {
		return fmt.Errorf("release the slot of run %s: %w", run.ID, err)
	}
	if admitted {
		w.signals.fire(queueTopic)
	}
	return nil
}

// admitNext gives a freed slot to the oldest queued run of the partition
// that is still queued (one cancelled while it waited only leaves), makes
// it pending and due, and queues its message. It reports whether it did.
func (w *World) admitNext(ctx context.Context, s *writeStmts, workflow, key string) (bool, error) {
	now := w.clock.Now()
	for {
		var (
			seq               int64
			msg               world.Message
			deliverAt         sql.NullInt64
			dedupKey, traceID sql.NullString
		)
		err := w.wconn.QueryRowContext(ctx, `SELECT seq, run_id, deliver_at, dedup_key, trace FROM limit_queue
			WHERE workflow = ? AND key = ? ORDER BY seq LIMIT 1`, workflow, key).Scan(&seq, &msg.RunID, &deliverAt, &dedupKey, &traceID)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if _, err := w.wconn.ExecContext(ctx, `DELETE FROM limit_queue WHERE seq = ?`, seq); err != nil {
			return false, err
		}
		msg.DeliverAt, msg.DedupKey, msg.Trace = timeCol(deliverAt), dedupKey.String, traceID.String
		due := world.DueAt(msg.DeliverAt, now).UnixNano()
		res, err := w.wconn.ExecContext(ctx, `UPDATE runs SET status = ?, updated_at = ?, due_at = ? WHERE id = ? AND status = ?`,
			string(world.StatusPending), now.UnixNano(), due, msg.RunID, string(world.StatusQueued))
		if n, err := rowsAffected(res, err); err != nil {
			return false, err
		} else if n == 0 {
			continue
		}
		if _, err := w.wconn.ExecContext(ctx, `INSERT INTO limit_slots (workflow, key, run_id) VALUES (?, ?, ?)`, workflow, key, msg.RunID); err != nil {
			return false, err
		}
		_, err = w.enqueueIn(s, msg)
		return true, err
	}
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
