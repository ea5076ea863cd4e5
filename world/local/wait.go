package local

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// A topic is what a waiter waits on: one run's log, one stream, or the queue.
type topic struct {
	kind byte
	name string
}

const queueKind, runKind, streamKind = 'q', 'r', 's'

var queueTopic = topic{kind: queueKind}

func runTopic(runID string) topic   { return topic{runKind, runID} }
func streamTopic(name string) topic { return topic{streamKind, name} }

// signals wakes in-process waiters. A write fires only its own topic, so a
// wait on one run is not woken by appends to every other run.
type signals struct {
	mu      sync.Mutex
	waiting map[topic]*signal
	// queueFired counts the firings of queueTopic (and of every topic):
	// each follows a write that may have made a message visible sooner.
	queueFired atomic.Uint64
}

// signal is closed when its topic next fires; waiters counts its holders so
// that the last one to give up removes it.
type signal struct {
	ch      chan struct{}
	waiters int
}

// watch returns a channel closed the next time t fires, and a release to
// call when no longer waiting on it.
func (s *signals) watch(t topic) (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sig := s.waiting[t]
	if sig == nil {
		if s.waiting == nil {
			s.waiting = map[topic]*signal{}
		}
		sig = &signal{ch: make(chan struct{})}
		s.waiting[t] = sig
	}
	sig.waiters++
	return sig.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if sig.waiters--; sig.waiters == 0 && s.waiting[t] == sig {
			delete(s.waiting, t)
		}
	}
}

// fireAll wakes every waiter on every topic.
func (s *signals) fireAll() {
	s.queueFired.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, sig := range s.waiting {
		close(sig.ch)
		delete(s.waiting, t)
	}
}

func (s *signals) fire(t topic) {
	if t == queueTopic {
		s.queueFired.Add(1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sig := s.waiting[t]; sig != nil {
		close(sig.ch)
		delete(s.waiting, t)
	}
}

// await calls check until it is done, sleeping between calls until t
// fires, the wake time check returned (if not zero) comes, or ctx ends.
// Watching t before each check means no firing is missed between the two.
func (w *World) await(ctx context.Context, t topic, check func() (done bool, wake time.Time, err error)) error {
	for {
		fired, release := w.signals.watch(t)
		done, wake, err := check()
		if done || err != nil {
			release()
			return err
		}
		err = w.sleep(ctx, fired, wake)
		release()
		if err != nil {
			return err
		}
	}
}

func (w *World) sleep(ctx context.Context, fired <-chan struct{}, wake time.Time) error {
	var timer <-chan time.Time
	if !wake.IsZero() {
		t := time.NewTimer(wake.Sub(w.clock.Now()))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-w.closed:
		return errClosed
	case <-fired:
	case <-timer:
	}
	return nil
}

// readContext is ctx without its cancellation, for a statement on the
// reader pool. Given a cancellable context, database/sql and the driver
// each start a goroutine per statement to watch it, two goroutines for a
// read that takes microseconds: hundreds of them were alive at once while
// a worker took a thousand runs, each with its stack, and a wake-up each
// on the path to a run's first step. A read never waits on the writer in
// WAL mode (the checkpointer's PASSIVE checkpoint holds no reader off),
// so there is nothing to cancel: a caller whose context ends gets its
// answer and a waiter still returns at once (sleep).
func readContext(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// slotCache remembers the last slot of the runs this World appends to, so
// that WaitEvents can check a wait without a query: a live invocation's
// watcher is woken by each of its own appends, and a query there costs as
// much as a quarter of the append. Writes by another process are not in
// it; when the World sees one (watchOtherProcesses) it forgets everything
// and waiters query again.
type slotCache struct {
	mu   sync.Mutex
	last map[string]int64
}

// slotCacheMax bounds the cache; past it, it starts over.
const slotCacheMax = 1 << 16

// note records that the run's log ends at last; a finished run is
// forgotten, as nobody waits long on one.
func (c *slotCache) note(runID string, last int64, finished bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if finished {
		delete(c.last, runID)
		return
	}
	if c.last == nil || len(c.last) >= slotCacheMax {
		c.last = map[string]int64{}
	}
	c.last[runID] = max(c.last[runID], last)
}

func (c *slotCache) get(runID string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, ok := c.last[runID]
	return last, ok
}

func (c *slotCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = nil
}

// WaitEvents implements world.Notifier.
func (w *World) WaitEvents(ctx context.Context, runID string, after int64) error {
	return w.await(ctx, runTopic(runID), func() (bool, time.Time, error) {
		if last, ok := w.slots.get(runID); ok {
			return last > after, time.Time{}, nil
		}
		var next int64
		err := w.rs.nextSlot.QueryRowContext(readContext(ctx), runID).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			return false, time.Time{}, nil // the run may yet be created
		}
		return next-1 > after, time.Time{}, err
	})
}

// WaitStream implements world.Notifier.
func (w *World) WaitStream(ctx context.Context, name string, from int64) error {
	return w.await(ctx, streamTopic(name), func() (bool, time.Time, error) {
		length, closed, err := streamState(w.rs.streamState.QueryRowContext(readContext(ctx), name))
		return closed || length > from, time.Time{}, err
	})
}
