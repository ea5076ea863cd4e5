package engine

import (
	"container/list"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// The warm cache keeps the runs this process suspended last as they were
// when it suspended them: the invocation itself, its workflow coroutines
// parked on what they await, every op and its state. A later delivery for
// such a run reads only the log's tail after the slot the invocation had
// applied (world.Store.Events after that slot: one Query of the new items
// on AWS, WHERE slot > ? on the embedded World), replays that tail onto
// the parked state and goes live, so that a resume costs what the new
// events cost, not what the history does.
//
// Nothing in it is trusted without a check against the World. An entry is
// used only by the invocation that holds the run's lease (taken before the
// tail is read, as for a full read), only if the run is the same one (its
// CreatedAt: a run deleted and created again under the same ID is not),
// only if its LastSlot has not gone back, and only if the tail read
// starts right after the entry's slot and reaches LastSlot. Anything else
// drops the entry and reads the whole log. Other invocations, on other
// instances, may have driven the run meanwhile: their events are in the
// tail and replay as recorded events, exactly as a fresh invocation would
// replay them.
//
// Only a clean suspension is kept: no step in flight, nothing buffered,
// the lease released, nothing failed. Entries are bounded in number and in
// bytes (the payloads of the events applied, plus a reckoning of each
// event's and each coroutine's memory), least recently parked first out;
// an evicted entry's coroutines are unwound as at the end of any
// invocation.

// errWarmStale says a parked invocation's tail read did not fit its
// state: Process drops it and starts afresh.
var errWarmStale = errors.New("the warm state of the run does not fit its log")

// Defaults of Engine.WarmRuns and Engine.WarmBytes.
const (
	defaultWarmRuns  = 128
	defaultWarmBytes = 64 << 20
)

// What a parked invocation is reckoned to hold besides its events'
// payloads: per event applied (the op, its maps' entries), and per
// coroutine (a goroutine's stack starts at 8 KiB).
const (
	warmEventBytes     = 256
	warmCoroutineBytes = 8 << 10
)

// warmCache is an LRU of parked invocations, by run ID.
type warmCache struct {
	mu    sync.Mutex
	order list.List // of *warmRun, most recently parked first
	byRun map[string]*list.Element
	bytes int64
}

type warmRun struct {
	inv  *invocation
	size int64
}

func (e *Engine) warmBounds() (runs int, bytes int64) {
	runs, bytes = e.WarmRuns, e.WarmBytes
	if runs == 0 {
		runs = defaultWarmRuns
	}
	if bytes == 0 {
		bytes = defaultWarmBytes
	}
	return runs, bytes
}

// park ends inv: kept in the warm cache if it suspended cleanly and fits,
// closed otherwise.
func (e *Engine) park(inv *invocation, err error) {
	if err != nil || !inv.parkable() {
		inv.close()
		return
	}
	inv.end()
	maxRuns, maxBytes := e.warmBounds()
	size := inv.warmSize()
	if maxRuns < 0 || maxBytes < 0 || size > maxBytes {
		inv.sched.unwind()
		return
	}
	inv.shed()
	c := &e.warm
	var evicted []*invocation
	c.mu.Lock()
	if c.byRun == nil {
		c.byRun = map[string]*list.Element{}
	}
	if old, ok := c.byRun[inv.run.ID]; ok {
		evicted = append(evicted, c.removeLocked(old))
	}
	c.byRun[inv.run.ID] = c.order.PushFront(&warmRun{inv: inv, size: size})
	c.bytes += size
	for c.order.Len() > maxRuns || c.bytes > maxBytes {
		evicted = append(evicted, c.removeLocked(c.order.Back()))
	}
	c.mu.Unlock()
	for _, old := range evicted {
		old.sched.unwind() // outside the lock: it runs the workflows' defers
	}
}

// slot returns the last slot the run's parked invocation applied, or 0.
func (c *warmCache) slot(runID string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byRun[runID]; ok {
		return el.Value.(*warmRun).inv.lastSlot.Load()
	}
	return 0
}

// take removes and returns the run's parked invocation, if any.
func (c *warmCache) take(runID string) *invocation {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byRun[runID]
	if !ok {
		return nil
	}
	return c.removeLocked(el)
}

func (c *warmCache) removeLocked(el *list.Element) *invocation {
	w := c.order.Remove(el).(*warmRun)
	delete(c.byRun, w.inv.run.ID)
	c.bytes -= w.size
	return w.inv
}

// DropWarm unwinds every parked invocation: a stopping worker leaves no
// goroutine behind.
func (e *Engine) DropWarm() {
	c := &e.warm
	c.mu.Lock()
	var parked []*invocation
	for c.order.Len() > 0 {
		parked = append(parked, c.removeLocked(c.order.Front()))
	}
	c.mu.Unlock()
	for _, inv := range parked {
		inv.sched.unwind()
	}
}

// parkable reports whether the invocation suspended cleanly, so that its
// state is exactly what its log says: nothing running, nothing buffered,
// nothing failed, the lease given back.
func (inv *invocation) parkable() bool {
	return inv.outcome == "suspended" && inv.driving && inv.fatal == nil && !inv.finished && !inv.terminal &&
		inv.live.running == 0 && inv.out.empty() && !inv.lease.held &&
		inv.sched.crash == nil && inv.ctx.Err() == nil
}

func (inv *invocation) warmSize() int64 {
	return inv.bytes + inv.lastSlot.Load()*warmEventBytes + int64(len(inv.sched.coroutines))*warmCoroutineBytes
}

// fits reports whether a parked invocation may carry on run as GetRun
// returned it: the same run, whose log has not gone back.
func (inv *invocation) fits(run world.Run) bool {
	return run.CreatedAt.Equal(inv.run.CreatedAt) && run.Workflow == inv.run.Workflow && run.LastSlot >= inv.lastSlot.Load()
}

// shed lets a parked invocation go of what only a delivery uses, which
// revive makes anew: hundreds of runs wait in the cache, and each holds
// its workflow's state and little else. Its context becomes one that is
// already done, as the delivery's was; the empty buffer's array, which
// still holds the events last written, goes too. The logger stays: an
// evicted run's coroutines may log as they unwind.
func (inv *invocation) shed() {
	inv.ctx, inv.cancel = parkedContext, func(error) {}
	inv.live.shed()
	inv.lease = nil
	inv.out.pending, inv.inbox.read = nil, nil
}

// parkedContext is every parked invocation's: canceled, with no values.
var parkedContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// revive makes a parked invocation the current one for a new delivery.
func (inv *invocation) revive(ctx context.Context, run world.Run) {
	inv.begin(ctx, run)
	inv.span, inv.outcome, inv.inbox.folded = nil, "", false
	inv.liveAt = time.Time{} // its budget is this invocation's
}

// tailFits reports whether tail is what the log holds after the parked
// invocation's last slot, up to at least lastSlot (GetRun's, read before
// the lease): slots in order from the next one, none missing.
func (inv *invocation) tailFits(tail []world.Event, lastSlot int64) bool {
	next := inv.lastSlot.Load() + 1
	for _, ev := range tail {
		if ev.Slot != next {
			return false
		}
		next++
	}
	return next-1 >= lastSlot
}

// driveWarm replays the tail onto the parked state, then goes live.
func (inv *invocation) driveWarm(tail []world.Event) error {
	if err := inv.e.pinnedElsewhere(inv.run.ID, inv.run.Workflow, inv.replay.pinned); err != nil {
		return err
	}
	inv.expectRecorded(tail)
	inv.replay.begin(max(lastSeen(tail), inv.lastSlot.Load()))
	for i, ev := range tail {
		inv.replay.at(len(tail) - 1 - i)
		inv.apply(ev)
	}
	inv.replay.end()
	if !inv.terminal {
		inv.logAt(slog.LevelInfo, "workflow: run resumed", "replayed_events", len(tail), "warm", true)
		if _, pin := inv.e.pin(); pin != nil && inv.replay.pinned != inv.e.Deployment {
			inv.out.merge(world.RunUpdate{Attributes: pin})
		}
		inv.countResume()
	}
	return inv.goLive()
}
