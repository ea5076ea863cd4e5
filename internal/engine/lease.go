package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// defaultLeaseTTL is how long a run stays leased to an invocation that has
// stopped renewing its lease, because it died or stalled, before another
// invocation may take the run over and count its step attempts as
// interrupted. A live invocation renews every third of it.
const defaultLeaseTTL = 30 * time.Second

// deferSlack is how long after the holder's lease would lapse a deferred
// delivery comes back: by then the holder has renewed it or is gone.
const deferSlack = time.Second

// releaseTimeout bounds the release of a lease by an invocation whose own
// context is done (a worker shutting down): releasing lets the next
// invocation start at once instead of after the lease.
const releaseTimeout = 5 * time.Second

// errLeaseLost cancels an invocation whose lease was taken over.
var errLeaseLost = errors.New("the run's lease was taken over by another invocation")

func (e *Engine) leaseTTL() time.Duration {
	if e.LeaseTTL > 0 {
		return e.LeaseTTL
	}
	return defaultLeaseTTL
}

// runLease is an invocation's hold on its run's lease. Leases are about
// processes, so they use the wall clock, never the engine's (a test clock
// that skips hours would expire every lease).
type runLease struct {
	owner string
	held  bool
	stop  chan struct{} // stops the heartbeat
	beats sync.WaitGroup
}

func newRunLease() *runLease {
	return &runLease{owner: "inv_" + rand.Text()}
}

// hold marks the lease held and keeps it renewed by beat, on a goroutine
// of its own, until letGo.
func (l *runLease) hold(beat func(stop <-chan struct{})) {
	l.held, l.stop = true, make(chan struct{})
	l.beats.Go(func() { beat(l.stop) })
}

// letGo stops the renewals and waits for one in flight, which must not
// see the release that follows as a loss. It reports whether the lease
// was held.
func (l *runLease) letGo() bool {
	if !l.held {
		return false
	}
	close(l.stop)
	l.beats.Wait()
	l.held = false
	return true
}

// acquireLease takes the run's lease and keeps it renewed. If another live
// invocation holds the lease the error matches world.ErrLeaseHeld and held
// is its lease. On a world.RunReader last is the run's LastSlot as the
// lease found it, else -1.
func (inv *invocation) acquireLease() (held world.Lease, last int64, err error) {
	l := inv.lease
	if l.held {
		return world.Lease{}, -1, nil
	}
	now := time.Now()
	ttl := inv.e.leaseTTL()
	lease := world.Lease{Owner: l.owner, Until: now.Add(ttl)}
	last = -1
	if rr := inv.e.caps().runReader; rr != nil {
		held, last, err = rr.AcquireLeaseAt(inv.ctx, inv.run.ID, lease, now)
	} else {
		held, err = inv.e.World.AcquireLease(inv.ctx, inv.run.ID, lease, now)
	}
	if err != nil {
		return held, -1, err
	}
	l.hold(func(stop <-chan struct{}) { inv.heartbeat(stop, ttl) })
	return world.Lease{}, last, nil
}

// heartbeat renews the lease every third of its TTL while the invocation
// lives. A lease taken over means this invocation stalled past it and was
// replaced: it stops (its writes would be refused anyway). Other errors
// are retried at the next beat; the lease outlasts two missed beats.
func (inv *invocation) heartbeat(stop <-chan struct{}, ttl time.Duration) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-inv.ctx.Done():
			return
		case <-t.C:
		}
		err := inv.e.World.RenewLease(inv.ctx, inv.run.ID, world.Lease{Owner: inv.lease.owner, Until: time.Now().Add(ttl)})
		switch {
		case errors.Is(err, world.ErrLeaseLost):
			inv.cancel(errLeaseLost)
			return
		case err != nil && inv.ctx.Err() == nil:
			inv.logAt(slog.LevelWarn, "workflow: renewing the run's lease failed; retrying", "err", err)
		}
	}
}

// releaseLease gives the lease back and reports whether events reached the
// log that this invocation has not applied: while it held the lease, a
// second delivery for them was deferred to it, so it must act on them. A
// finished run's lease is left to lapse, which saves a write: nothing
// drives a finished run. The release tells the World when the run is next
// due (world.Release): at its earliest wake-up if suspended, at once if
// handed off or failed, so that the stuck-run check (stuck.go) knows
// whether something should be moving it.
func (inv *invocation) releaseLease(suspended bool) (missed bool, err error) {
	l := inv.lease
	if !l.letGo() || inv.terminal {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(inv.ctx), releaseTimeout)
	defer cancel()
	release := world.Release{Owner: l.owner, Seen: inv.lastSlot.Load(), Suspended: suspended}
	if suspended {
		release.Wake = inv.nextDue()
	}
	last, err := inv.e.World.ReleaseLease(ctx, inv.run.ID, release)
	if err != nil && !errors.Is(err, world.ErrLeaseLost) {
		return false, err
	}
	return last > inv.lastSlot.Load(), nil
}

// appendEvents writes to the run's log, under the lease if it holds one,
// so that the World refuses the write if another invocation took over.
// Events and update are sealed with the run's codec on their way; what
// the writer missed comes back opened.
func (inv *invocation) appendEvents(from int64, evs []world.Event, update *world.RunUpdate) (missed []world.Event, err error) {
	if inv.seal != nil {
		if evs, err = sealEvents(inv.seal, evs); err != nil {
			return nil, err
		}
		if update, err = sealUpdate(inv.seal, update); err != nil {
			return nil, err
		}
	}
	if inv.lease.held {
		missed, err = inv.e.World.AppendLeased(inv.ctx, inv.lease.owner, inv.run.ID, from, evs, update)
	} else {
		missed, err = inv.e.World.AppendEvents(inv.ctx, inv.run.ID, from, evs, update)
	}
	return inv.opened(missed, err)
}

// deferToHolder absorbs a delivery for a run that another live invocation
// drives. Any event that came with the delivery (a hook resume, a
// cancellation, a child's result) is already in the log, where the
// holder's watcher, or its check on release, finds it. The delivery
// itself is put back, to come again once the holder's lease would lapse
// if it stopped renewing it: a wake-up that carries no event (a timer, a
// redelivery of the holder's own message) is never dropped, and never
// acted on beside the holder.
func (inv *invocation) deferToHolder(held world.Lease) error {
	wait := max(time.Until(held.Until), 0) + deferSlack
	inv.logAt(slog.LevelInfo, "workflow: another invocation drives the run; this delivery is deferred to it",
		"lease_until", held.Until.UTC().Format(time.RFC3339Nano))
	return enqueue(inv.ctx, inv.e.World, world.Message{
		RunID: inv.run.ID, DeliverAt: inv.e.now().Add(wait), DedupKey: inv.run.ID + "/deferred",
	})
}

// leaseLost reports whether the invocation ended because another took its
// run's lease over: the new holder drives the run, nothing failed.
func (inv *invocation) leaseLost(err error) bool {
	return errors.Is(err, world.ErrLeaseLost) || errors.Is(context.Cause(inv.ctx), errLeaseLost)
}
