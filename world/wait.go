package world

import (
	"context"
	"time"
)

// Pacing of waiters on Worlds that are not Notifiers. The first checks
// come quickly so short waits stay short; then the pause doubles up to
// pollMax, and after a waiter's first second (pollGrace) it paces its
// requests at pollRate a second, however often it finds something new: on
// AWS every request is billed. The limit a waiter is held to is 5 a second;
// pacing at 4 keeps it there over any window, whatever a round's timing.
const (
	pollFirst = 10 * time.Millisecond
	pollMax   = time.Second
	pollGrace = time.Second
	pollRate  = 4 // requests a second
)

// Pace spaces the requests of one waiter (a caller waiting for a run's
// result, a stream reader) on a World that cannot notify. Make one with
// NewPace when the wait begins, keep it for the whole wait, however many
// checks it takes, and call Pause before every check but the first.
type Pace struct {
	perRound int
	started  time.Time // the waiter's first second counts from here
	pause    time.Duration
}

// NewPace starts the pace of a waiter that makes perRound requests after
// each pause (at least one); its pauses grow with perRound to keep the
// rate.
func NewPace(perRound int) Pace {
	return Pace{perRound: max(perRound, 1), started: time.Now()}
}

// Pause waits until the waiter may check again, or until ctx is done.
func (p *Pace) Pause(ctx context.Context) error { return p.PauseOrWake(ctx, nil) }

// PauseOrWake is Pause cut short when wake is closed: a push (see
// StreamSubscriber) says there is something to check now. A push comes
// from a write, so the checks it adds are bounded by the writes, not by
// time; the pace only times the checks nobody asked for.
func (p *Pace) PauseOrWake(ctx context.Context, wake <-chan struct{}) error {
	d := max(p.pause, pollFirst)
	if time.Since(p.started) >= pollGrace {
		d = max(d, p.floor())
	}
	p.pause = min(d*2, max(pollMax, p.floor()))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	case <-wake:
		return nil
	}
}

// Progress tells the Pace that the last check found something new: the
// next pause is short again, as short as the waiter's rate allows.
func (p *Pace) Progress() { p.pause = 0 }

// floor is the shortest pause that keeps the waiter at pollRate.
func (p *Pace) floor() time.Duration {
	return time.Duration(max(p.perRound, 1)) * time.Second / pollRate
}

// WaitEvents waits until the waiter should look at the run again: until
// its log has an event at a slot > after on a Notifier, for the next pause
// elsewhere (the waiter's own next read is then the poll).
func (p *Pace) WaitEvents(ctx context.Context, w Store, runID string, after int64) error {
	if n, ok := w.(Notifier); ok {
		return n.WaitEvents(ctx, runID, after)
	}
	return p.Pause(ctx)
}

// WaitStream is WaitEvents for a stream: until it has a chunk at index >=
// from or is closed on a Notifier, for the next pause elsewhere.
func (p *Pace) WaitStream(ctx context.Context, w Streams, name string, from int64) error {
	if n, ok := w.(Notifier); ok {
		return n.WaitStream(ctx, name, from)
	}
	return p.Pause(ctx)
}

// Notifies reports whether w wakes waiters itself (a Notifier), so that
// they need no Pace.
func Notifies(w any) bool {
	_, ok := w.(Notifier)
	return ok
}

// WaitEvents returns once the run's log has an event at a slot > after, or
// when ctx is done. It uses the World's Notifier if it has one, else polls
// at a Pace.
func WaitEvents(ctx context.Context, w Store, runID string, after int64) error {
	if n, ok := w.(Notifier); ok {
		return n.WaitEvents(ctx, runID, after)
	}
	return poll(ctx, func() (bool, error) {
		evs, err := w.Events(ctx, runID, after)
		return len(evs) > 0, err
	})
}

// WaitStream returns once the stream has a chunk at index >= from or is
// closed, or when ctx is done. It uses the World's Notifier if it has one,
// else polls at a Pace.
func WaitStream(ctx context.Context, w Streams, name string, from int64) error {
	if n, ok := w.(Notifier); ok {
		return n.WaitStream(ctx, name, from)
	}
	return poll(ctx, func() (bool, error) {
		chunks, closed, err := w.ReadStream(ctx, name, from)
		return closed || len(chunks) > 0, err
	})
}

func poll(ctx context.Context, ready func() (bool, error)) error {
	pace := NewPace(1)
	for {
		ok, err := ready()
		if err != nil || ok {
			return err
		}
		if err := pace.Pause(ctx); err != nil {
			return err
		}
	}
}
