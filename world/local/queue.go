package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
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
		if next, known := w.nextVisible.get(&w.signals); known && (next.IsZero() || w.clock.Now().Before(next)) {
			return false, next, nil // nothing due: sleep until next or a firing
		}
		fired := w.signals.queueFired.Load() // before the take: a write after it fires again
		var (
			got  bool
			next time.Time
			err  error
		)
		d, got, next, err = w.take(visibility)
		if err == nil {
			w.nextVisible.set(fired, next)
		}
		return got, next, err
	})
	if err != nil {
		return world.Delivery{}, fmt.Errorf("receive: %w", err)
	}
	return d, nil
}

// take takes the earliest visible message, if any, and returns when the
// next one becomes visible (zero: none queued).
//
// The take is not written by a transaction of its own: it is noted
// (World.taken) and written by the World's next write (transact), which
// on the worker's path is the run's lease, in the same commit. Until then
// only this World could take the message again, and a take while one is
// noted writes it first. A receipt is not acknowledged to anyone: lost
// with the process, the message is still due and is delivered again, as a
// message taken and not acked is once claimQueue releases it.
func (w *World) take(visibility time.Duration) (d world.Delivery, got bool, next time.Time, err error) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	now := w.clock.Now()
	hidden := now.Add(visibility)
	if w.taken != nil { // write it first, as a take in a transaction
		var nextNs sql.NullInt64
		err = w.transact(func(s *writeStmts) error {
			var err error
			d, err = scanDelivery(s.take.QueryRow(hidden.UnixNano(), now.UnixNano()))
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			got = err == nil
			return s.nextVisible.QueryRow().Scan(&nextNs)
		})
		return d, got, timeCol(nextNs), err
	}
	var others sql.NullInt64
	d, err = scanDelivery(w.ws.peek.QueryRow(now.UnixNano()), &others)
	if errors.Is(err, sql.ErrNoRows) {
		var nextNs sql.NullInt64
		err = w.ws.nextVisible.QueryRow().Scan(&nextNs)
		return d, false, timeCol(nextNs), err
	}
	if err != nil {
		return d, false, time.Time{}, err
	}
	id, _ := receiptID(d)
	d.Attempt++
	w.taken = &noted{id: id, visibleAt: hidden.UnixNano(), attempt: d.Attempt}
	next = hidden
	if at := timeCol(others); !at.IsZero() && at.Before(next) {
		next = at
	}
	return d, true, next, nil
}

// noted is a take not yet written: the message's new visibility and
// delivery count.
type noted struct {
	id, visibleAt int64
	attempt       int
}

// writeTaken writes the noted take, in the caller's transaction.
func (w *World) writeTaken(s *writeStmts) error {
	if w.taken == nil {
		return nil
	}
	_, err := s.markTaken.Exec(w.taken.visibleAt, w.taken.attempt, w.taken.id)
	return err
}

// visibleHint remembers when the queue's next message becomes visible, as
// the last take found it, so that the worker's next Receive, right after
// it took a message, sleeps without a write transaction of its own: that
// empty take held the writer while the delivery it had just handed out
// took its run's lease. The hint stands until queueTopic fires, which
// every write that queues a message or makes one visible again does
// (another process's writes fire every topic); takes and acks only make
// the next message later, so a hint is at worst early, which costs a take.
type visibleHint struct {
	mu    sync.Mutex
	fired uint64    // signals.queueFired when the take began
	next  time.Time // zero: the queue held nothing
	valid bool
}

func (h *visibleHint) set(fired uint64, next time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fired, h.next, h.valid = fired, next, true
}

// get returns the next visible time if nothing has fired since the take
// that found it (zero: no message at all), and whether it knows it.
func (h *visibleHint) get(s *signals) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next, h.valid && h.fired == s.queueFired.Load()
}

// scanDelivery scans a message's row, and the extra columns after it.
func scanDelivery(row scanner, extra ...any) (world.Delivery, error) {
	var (
		d         world.Delivery
		id        int64
		deliverAt sql.NullInt64
		dedupKey  sql.NullString
	)
	if err := row.Scan(append([]any{&id, &d.RunID, &deliverAt, &dedupKey, &d.Attempt}, extra...)...); err != nil {
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
