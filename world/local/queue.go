package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Enqueue implements world.Queue. A message is visible from its DeliverAt,
// or from now, so that messages due at once are received in order. It is
// an acknowledging call (WithFullSync): the message wakes a run for a
// caller, such as a hook's resume, that is told the run will act on it.
// Receive, Ack and Release are not: a receipt or an ack lost to a power cut
// only delivers the message again, which at-least-once delivery allows.
func (w *World) Enqueue(_ context.Context, msg world.Message) error {
	var added bool
	err := w.write(func(s *writeStmts) (err error) {
		added, err = w.enqueueIn(s, msg)
		return err
	})
	if err != nil {
		return w.acknowledged(fmt.Errorf("enqueue for run %s: %w", msg.RunID, err))
	}
	if added {
		w.signals.fire(queueTopic)
	}
	return w.acknowledged(nil)
}

// enqueueIn queues msg in the open write transaction; false means a
// duplicate, dropped by the queue_dedup index.
func (w *World) enqueueIn(s *writeStmts, msg world.Message) (bool, error) {
	visibleAt := msg.DeliverAt
	if visibleAt.IsZero() {
		visibleAt = w.clock.Now()
	}
	res, err := s.enqueue.Exec(msg.RunID, timeArg(msg.DeliverAt), textArg(msg.DedupKey), visibleAt.UnixNano())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Receive implements world.Queue: the earliest due message first. While
// none is due it sleeps until the earliest becomes visible or a message is
// enqueued.
func (w *World) Receive(ctx context.Context, visibility time.Duration) (world.Delivery, error) {
	if err := w.claimQueue(); err != nil {
		return world.Delivery{}, err
	}
	var d world.Delivery
	err := w.await(ctx, queueTopic, func() (bool, time.Time, error) {
		var (
			got  bool
			next sql.NullInt64
		)
		err := w.write(func(s *writeStmts) error {
			now := w.clock.Now()
			var err error
			d, err = scanDelivery(s.take.QueryRow(now.Add(visibility).UnixNano(), now.UnixNano()))
			if errors.Is(err, sql.ErrNoRows) {
				return s.nextVisible.QueryRow().Scan(&next)
			}
			got = err == nil
			return err
		})
		return got, timeCol(next), err
	})
	if err != nil {
		return world.Delivery{}, fmt.Errorf("receive: %w", err)
	}
	return d, nil
}

func scanDelivery(row scanner) (world.Delivery, error) {
	var (
		d         world.Delivery
		id        int64
		deliverAt sql.NullInt64
		dedupKey  sql.NullString
	)
	if err := row.Scan(&id, &d.RunID, &deliverAt, &dedupKey, &d.Attempt); err != nil {
		return world.Delivery{}, err
	}
	d.Receipt, d.DeliverAt, d.DedupKey = strconv.FormatInt(id, 10), timeCol(deliverAt), dedupKey.String
	return d, nil
}

// Release implements world.Queue. Only the latest delivery of a message
// releases it: a stale one, whose visibility lapsed and which another
// receiver now holds, leaves it hidden.
func (w *World) Release(_ context.Context, d world.Delivery) error {
	id, err := receiptID(d)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	var released bool
	if err := w.write(func(s *writeStmts) error {
		res, err := s.release.Exec(w.clock.Now().UnixNano(), id, d.Attempt)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		released = n > 0
		return err
	}); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if released {
		w.signals.fire(queueTopic)
	}
	return nil
}

func receiptID(d world.Delivery) (int64, error) {
	id, err := strconv.ParseInt(d.Receipt, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad receipt %q", d.Receipt)
	}
	return id, nil
}

// Ack implements world.Queue. The receipt names the message, not the
// delivery: a late Ack from a worker whose visibility timeout lapsed still
// deletes it, which at-least-once delivery allows.
func (w *World) Ack(_ context.Context, d world.Delivery) error {
	id, err := receiptID(d)
	if err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	if err := w.write(func(s *writeStmts) error {
		_, err := s.ack.Exec(id)
		return err
	}); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	return nil
}
