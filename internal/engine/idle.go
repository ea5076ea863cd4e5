package engine

import "sync"

// maxIdleRuns bounds idleRuns; when full it starts over, which costs only
// replays.
const maxIdleRuns = 10_000

// idleRuns remembers, per run, the last slot of its log when an invocation
// in this process suspended it with nothing scheduled (no timer, no retry
// due), or saw its end through (afterFinish done): only a new event or a
// message in its inbox can move such a run on. A delivery that finds the
// log still ending there (a duplicate, or one of a burst of resumes an
// earlier invocation already took in) has nothing to act on, and is
// dropped after one run read instead of reading and replaying the log or,
// for an ended run, closing every stream it had again: after a hundred
// callers of one responding hook, the wake-ups left in the queue would
// each close the hundred reply streams.
type idleRuns struct {
	mu   sync.Mutex
	slot map[string]int64
}

// mark records that runID is idle with its log ending at slot.
func (r *idleRuns) mark(runID string, slot int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slot == nil || len(r.slot) >= maxIdleRuns {
		r.slot = map[string]int64{}
	}
	r.slot[runID] = slot
}

// unchanged reports whether runID is idle and its log still ends at
// lastSlot; otherwise it forgets the run, which is about to be driven.
func (r *idleRuns) unchanged(runID string, lastSlot int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	slot, ok := r.slot[runID]
	if ok && slot == lastSlot && lastSlot > 0 {
		return true
	}
	delete(r.slot, runID)
	return false
}
