package world

import (
	"context"
	"time"
)

// StatusQueued is the status of a run that waits for a slot of its
// workflow's concurrency limit (see Limiter). It is not terminal: the run
// has a place in its partition's queue, no message and no due time, and
// becomes StatusPending, with its first message, when a slot frees.
const StatusQueued RunStatus = "queued"

// Limit is what bounds a run's start: the partition it counts in (its
// workflow and the key it was started with) and the partition's limits.
type Limit struct {
	Workflow string
	Key      string
	// Concurrency is how many runs of the partition may hold a slot at
	// once (0: any number). A run holds its slot from its start until it
	// ends; one that ends by continuing as new passes it to its successor.
	Concurrency int
	// Rate starts at most per Period (0: any number), counted in windows
	// of Period from the Unix epoch: a start beyond a window's Rate is
	// delivered at the start of the first window with room.
	Rate   int
	Period time.Duration
	// From, if set, is the run whose slot the new run takes over (a
	// continued run's successor): the new run skips the queue and the
	// rate, and the partition's count does not change.
	From string
}

// Limiter bounds how many runs of a partition run at once and how often
// they start. The slot count, the rate window and the queue of waiting
// runs are the World's, changed only together with a run's creation or in
// ReleaseSlot, so no crash between two writes can leave a slot held by a
// run that does not exist.
type Limiter interface {
	// StartLimited is RunStarter.StartRun for a run under limit. A new
	// run takes a free slot of the partition (or From's slot) and msg is
	// queued; if none is free the run is stored with StatusQueued at the
	// back of the partition's queue, with no message and no due time. A
	// rate moves msg.DeliverAt to the start of the first window with room,
	// and the run is due then; a queued run keeps that time for when it
	// is let in. An existing run is returned with ErrRunExists and
	// nothing changes, except that msg is queued again if the run is
	// neither queued nor finished.
	StartLimited(ctx context.Context, run Run, first []Event, msg Message, limit Limit) (Run, error)
	// ReleaseSlot frees what run holds in the partition of (run.Workflow,
	// key): its slot, which passes to the oldest queued run of the
	// partition (made pending and due, its message queued), or its place
	// in the queue. Releasing what the run does not hold does nothing, so
	// a release may be repeated.
	ReleaseSlot(ctx context.Context, run Run, key string) error
}

// RateWindow is a partition's rate state: the latest window a start was
// placed in (its index, counting Periods from the Unix epoch) and how
// many starts that window holds.
type RateWindow struct {
	Index int64
	Count int
}

// PlaceStart places a start at now under the limit's rate, after the
// starts placed before it (prev). It returns the partition's new rate
// state and when the start may be delivered (the zero time: now). Without
// a rate it changes nothing.
func (l Limit) PlaceStart(prev RateWindow, now time.Time) (RateWindow, time.Time) {
	if l.Rate <= 0 || l.Period <= 0 {
		return prev, time.Time{}
	}
	current := now.UnixNano() / int64(l.Period)
	switch {
	case prev.Index < current:
		return RateWindow{Index: current, Count: 1}, time.Time{}
	case prev.Count < l.Rate:
		prev.Count++
	default:
		prev = RateWindow{Index: prev.Index + 1, Count: 1}
	}
	at := time.Unix(0, prev.Index*int64(l.Period))
	if !at.After(now) {
		return prev, time.Time{}
	}
	return prev, at
}

// Admits reports whether a partition whose runs hold held slots has room
// for one more.
func (l Limit) Admits(held int) bool { return l.Concurrency <= 0 || held < l.Concurrency }

// DueAt is when a run whose first message is delivered at deliverAt is
// due (see Overdue): then, or now if that is past or unset.
func DueAt(deliverAt, now time.Time) time.Time {
	if deliverAt.After(now) {
		return deliverAt
	}
	return now
}
