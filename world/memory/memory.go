// Package memory is an in-process World for tests and for the workflowtest
// harness. Nothing survives the process. Its clock can be replaced, which is
// how the harness skips time.
package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Clock tells the World what time it is. The default is the wall clock.
type Clock interface {
	Now() time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// World is an in-memory world.World and world.Notifier.
type World struct {
	clock     Clock
	retention time.Duration // of finished runs; KeepForever unless WithRetention

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change: a broadcast
	runs    map[string]*runState
	order   []string // run IDs in creation order
	hooks   map[string]world.Hook
	queue   []*queued
	streams map[string]*stream
	seq     int
	limits  map[partitionKey]*partition // see limits.go
}

type runState struct {
	run    world.Run
	events []world.Event
	lease  world.Lease // zero Owner: not leased
	due    dueState
}

type queued struct {
	msg       world.Message
	receipt   string
	attempt   int
	visibleAt time.Time
}

type stream struct {
	chunks   [][]byte
	closed   bool
	closedAt time.Time // first close, for ReplyRetention
}

// Option configures a World.
type Option func(*World)

// WithClock replaces the wall clock, for tests that control time.
func WithClock(c Clock) Option { return func(w *World) { w.clock = c } }

// New returns an empty World.
func New(opts ...Option) *World {
	w := &World{
		clock:     wallClock{},
		retention: world.KeepForever,
		changed:   make(chan struct{}),
		runs:      map[string]*runState{},
		hooks:     map[string]world.Hook{},
		streams:   map[string]*stream{},
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

var (
	_ world.World    = (*World)(nil)
	_ world.Notifier = (*World)(nil)
)

// Close implements world.World.
func (w *World) Close() error { return nil }

// Poke wakes every waiter so it re-checks its condition; the harness calls
// it after moving a fake clock.
func (w *World) Poke() {
	w.mu.Lock()
	w.broadcastLocked()
	w.mu.Unlock()
}

func (w *World) broadcastLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitFor blocks until cond holds (checked under the lock) or ctx is done.
// deadline, if it returns a non-zero time, also wakes the waiter then.
func (w *World) waitFor(ctx context.Context, cond func() bool, deadline func() time.Time) error {
	for {
		w.mu.Lock()
		if cond() {
			w.mu.Unlock()
			return nil
		}
		ch := w.changed
		var timer <-chan time.Time
		if deadline != nil {
			if at := deadline(); !at.IsZero() {
				t := time.NewTimer(max(at.Sub(w.clock.Now()), 0))
				defer t.Stop()
				timer = t.C
			}
		}
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-timer:
		}
	}
}

// CreateRun implements world.Store.
func (w *World) CreateRun(_ context.Context, run world.Run, first []world.Event) (world.Run, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.createRunLocked(run, first)
}

// StartRun implements world.RunStarter.
func (w *World) StartRun(_ context.Context, run world.Run, first []world.Event, msg world.Message) (world.Run, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	created, err := w.createRunLocked(run, first)
	if !created.Status.Terminal() {
		w.enqueueLocked(msg)
	}
	return created, err
}

func (w *World) createRunLocked(run world.Run, first []world.Event) (world.Run, error) {
	if rs, ok := w.runs[run.ID]; ok {
		return rs.run, fmt.Errorf("create run %s: %w", run.ID, world.ErrRunExists)
	}
	rs := &runState{run: cloneRun(run)}
	for i, ev := range first {
		ev.RunID, ev.Slot = run.ID, int64(i+1)
		rs.events = append(rs.events, ev)
	}
	rs.run.LastSlot = int64(len(rs.events))
	rs.due = dueState{at: w.clock.Now()}
	w.runs[run.ID] = rs
	w.order = append(w.order, run.ID)
	w.broadcastLocked()
	return cloneRun(rs.run), nil
}

// GetRun implements world.Store.
func (w *World) GetRun(_ context.Context, id string) (world.Run, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, ok := w.runs[id]
	if !ok {
		return world.Run{}, fmt.Errorf("run %s: %w", id, world.ErrRunNotFound)
	}
	return cloneRun(rs.run), nil
}

// ListRuns implements world.Store. The cursor is a position in creation order.
func (w *World) ListRuns(_ context.Context, f world.RunFilter) (world.RunPage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	start := len(w.order) - 1
	if f.Cursor != "" {
		n, err := strconv.Atoi(f.Cursor)
		if err != nil || n >= len(w.order) {
			return world.RunPage{}, fmt.Errorf("list runs: bad cursor %q", f.Cursor)
		}
		start = n
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var page world.RunPage
	for i := start; i >= 0; i-- {
		r := w.runs[w.order[i]].run
		if !world.MatchRun(r, f) {
			continue
		}
		if len(page.Runs) == limit {
			page.NextCursor = strconv.Itoa(i)
			break
		}
		page.Runs = append(page.Runs, cloneRun(r))
	}
	return page, nil
}

// AppendEvents implements world.Store.
func (w *World) AppendEvents(_ context.Context, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, ok := w.runs[runID]
	if !ok {
		return nil, fmt.Errorf("append to run %s: %w", runID, world.ErrRunNotFound)
	}
	missed, err := w.appendLocked(rs, from, events, update)
	if err == nil && !rs.run.Status.Terminal() {
		rs.due.at = w.clock.Now() // a message follows
	}
	return missed, err
}

// AppendLeased implements world.Leaser.
func (w *World) AppendLeased(_ context.Context, owner, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, err := w.leasedLocked(runID, owner)
	if err != nil {
		return nil, fmt.Errorf("append to run %s: %w", runID, err)
	}
	return w.appendLocked(rs, from, events, update)
}

func (w *World) appendLocked(rs *runState, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	runID := rs.run.ID
	if next := int64(len(rs.events)) + 1; from != next {
		if from < next && from >= 1 {
			return slices.Clone(rs.events[from-1:]), fmt.Errorf("append to run %s at slot %d: %w", runID, from, world.ErrSlotTaken)
		}
		return nil, fmt.Errorf("append to run %s at slot %d: the log has %d events", runID, from, next-1)
	}
	if rs.run.Status.Terminal() {
		return nil, fmt.Errorf("append to run %s: %w", runID, world.ErrRunFinished)
	}
	for i, ev := range events {
		ev.RunID, ev.Slot = runID, from+int64(i)
		rs.events = append(rs.events, ev)
	}
	rs.run.LastSlot = int64(len(rs.events))
	if update != nil {
		world.ApplyUpdate(&rs.run, *update, w.clock.Now())
	}
	if rs.run.Status.Terminal() {
		rs.due = dueState{}
	}
	w.broadcastLocked()
	return nil, nil
}

// AcquireLease implements world.Leaser.
func (w *World) AcquireLease(_ context.Context, runID string, lease world.Lease, now time.Time) (world.Lease, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, ok := w.runs[runID]
	if !ok {
		return world.Lease{}, fmt.Errorf("lease run %s: %w", runID, world.ErrRunNotFound)
	}
	if held := rs.lease; held.Owner != "" && held.Owner != lease.Owner && held.Until.After(now) {
		return held, fmt.Errorf("lease run %s: %w", runID, world.ErrLeaseHeld)
	}
	rs.lease = lease
	return lease, nil
}

// RenewLease implements world.Leaser.
func (w *World) RenewLease(_ context.Context, runID string, lease world.Lease) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, err := w.leasedLocked(runID, lease.Owner)
	if err != nil {
		return fmt.Errorf("renew lease of run %s: %w", runID, err)
	}
	rs.lease = lease
	return nil
}

// ReleaseLease implements world.Leaser.
func (w *World) ReleaseLease(_ context.Context, runID string, release world.Release) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, err := w.leasedLocked(runID, release.Owner)
	if err != nil {
		last := int64(0)
		if rs != nil {
			last = rs.run.LastSlot
		}
		return last, fmt.Errorf("release lease of run %s: %w", runID, err)
	}
	rs.lease = world.Lease{}
	rs.due.release(release, rs.run.LastSlot, w.clock.Now())
	return rs.run.LastSlot, nil
}

// leasedLocked returns the run if owner holds its lease.
func (w *World) leasedLocked(runID, owner string) (*runState, error) {
	rs, ok := w.runs[runID]
	switch {
	case !ok:
		return nil, world.ErrRunNotFound
	case rs.lease.Owner != owner || owner == "":
		return rs, world.ErrLeaseLost
	}
	return rs, nil
}

// Events implements world.Store.
func (w *World) Events(_ context.Context, runID string, after int64) ([]world.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, ok := w.runs[runID]
	if !ok {
		return nil, fmt.Errorf("events of run %s: %w", runID, world.ErrRunNotFound)
	}
	if after >= int64(len(rs.events)) {
		return nil, nil
	}
	return slices.Clone(rs.events[max(after, 0):]), nil
}

// ClaimHook implements world.Store.
func (w *World) ClaimHook(_ context.Context, h world.Hook, force bool) (world.Hook, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev, held := w.hooks[h.Token]
	if held && world.HookBlocks(prev, h, w.clock.Now()) && !force {
		return prev, fmt.Errorf("claim hook: %w", world.ErrHookConflict)
	}
	if held && prev.RunID == h.RunID && prev.CorrelationID == h.CorrelationID && !prev.Disposed {
		return world.Hook{}, nil
	}
	w.hooks[h.Token] = h
	w.broadcastLocked()
	if !held {
		prev = world.Hook{}
	}
	return prev, nil
}

// GetHook implements world.Store.
func (w *World) GetHook(_ context.Context, token string) (world.Hook, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.hooks[token]
	if !ok || (h.Disposed && !h.RetainUntil.After(w.clock.Now())) {
		return world.Hook{}, fmt.Errorf("hook: %w", world.ErrHookNotFound)
	}
	return h, nil
}

// DisposeHook implements world.Store.
func (w *World) DisposeHook(_ context.Context, token, runID string, retainUntil time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.hooks[token]
	if !ok {
		return nil
	}
	if h.RunID != runID {
		return fmt.Errorf("dispose hook: %w", world.ErrHookNotOwner)
	}
	if retainUntil.IsZero() {
		delete(w.hooks, token)
	} else {
		h.Disposed, h.RetainUntil = true, retainUntil
		w.hooks[token] = h
	}
	w.broadcastLocked()
	return nil
}

// Enqueue implements world.Queue.
func (w *World) Enqueue(_ context.Context, msg world.Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.enqueueLocked(msg)
	return nil
}

func (w *World) enqueueLocked(msg world.Message) {
	if msg.DedupKey != "" {
		for _, q := range w.queue {
			if q.msg.DedupKey == msg.DedupKey && q.attempt == 0 {
				return
			}
		}
	}
	w.seq++
	w.queue = append(w.queue, &queued{msg: msg, receipt: strconv.Itoa(w.seq), visibleAt: msg.DeliverAt})
	w.broadcastLocked()
}

// Receive implements world.Queue: the earliest due message first.
func (w *World) Receive(ctx context.Context, visibility time.Duration) (world.Delivery, error) {
	var got world.Delivery
	take := func() bool {
		now := w.clock.Now()
		var best *queued
		for _, q := range w.queue {
			if !q.visibleAt.After(now) && (best == nil || q.visibleAt.Before(best.visibleAt)) {
				best = q
			}
		}
		if best == nil {
			return false
		}
		best.attempt++
		best.visibleAt = now.Add(visibility)
		got = world.Delivery{Message: best.msg, Receipt: best.receipt, Attempt: best.attempt}
		return true
	}
	err := w.waitFor(ctx, take, w.nextDueLocked)
	return got, err
}

func (w *World) nextDueLocked() time.Time {
	var next time.Time
	for _, q := range w.queue {
		if next.IsZero() || q.visibleAt.Before(next) {
			next = q.visibleAt
		}
	}
	return next
}

// NextDue returns when the earliest queued message becomes visible, and
// false if the queue is empty. The harness uses it to skip time.
func (w *World) NextDue() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nextDueLocked(), len(w.queue) > 0
}

// Ack implements world.Queue.
func (w *World) Ack(_ context.Context, d world.Delivery) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = slices.DeleteFunc(w.queue, func(q *queued) bool { return q.receipt == d.Receipt })
	return nil
}

// Release implements world.Queue. Only the latest delivery of a message
// releases it: a stale one, whose visibility lapsed and which another
// receiver now holds, leaves it hidden.
func (w *World) Release(_ context.Context, d world.Delivery) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, q := range w.queue {
		if q.receipt == d.Receipt && q.attempt == d.Attempt {
			q.visibleAt = w.clock.Now()
			w.broadcastLocked()
		}
	}
	return nil
}

// WriteStream implements world.Streams.
func (w *World) WriteStream(_ context.Context, name string, chunks [][]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.streamLocked(name)
	if s.closed {
		return fmt.Errorf("write stream %s: %w", name, world.ErrStreamClosed)
	}
	for _, c := range chunks {
		s.chunks = append(s.chunks, slices.Clone(c))
	}
	w.broadcastLocked()
	return nil
}

// CloseStream implements world.Streams.
func (w *World) CloseStream(_ context.Context, name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.streamLocked(name); !s.closed {
		s.closed, s.closedAt = true, w.clock.Now()
	}
	w.broadcastLocked()
	return nil
}

// streamLocked returns the named stream, creating it empty.
func (w *World) streamLocked(name string) *stream {
	s := w.streams[name]
	if s == nil {
		s = &stream{}
		w.streams[name] = s
	}
	return s
}

// ReadStream implements world.Streams.
func (w *World) ReadStream(_ context.Context, name string, from int64) ([][]byte, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.streams[name]
	if s == nil {
		return nil, false, nil
	}
	if from < 0 || from >= int64(len(s.chunks)) {
		return nil, s.closed, nil
	}
	return slices.Clone(s.chunks[from:]), s.closed, nil
}

// WaitEvents implements world.Notifier.
func (w *World) WaitEvents(ctx context.Context, runID string, after int64) error {
	return w.waitFor(ctx, func() bool {
		rs, ok := w.runs[runID]
		return ok && int64(len(rs.events)) > after
	}, nil)
}

// WaitStream implements world.Notifier.
func (w *World) WaitStream(ctx context.Context, name string, from int64) error {
	return w.waitFor(ctx, func() bool {
		s := w.streams[name]
		return s != nil && (s.closed || int64(len(s.chunks)) > from)
	}, nil)
}

func cloneRun(r world.Run) world.Run {
	r.Attributes = maps.Clone(r.Attributes)
	return r
}
