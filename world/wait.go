package world

import (
	"context"
	"time"
)

// Polling bounds for Worlds that are not Notifiers. The first check is
// quick so short waits stay short; the backoff keeps an idle wait cheap.
const (
	pollFirst = 10 * time.Millisecond
	pollMax   = time.Second
)

// WaitEvents returns once the run's log has an event at a slot > after, or
// when ctx is done. It uses the World's Notifier if it has one, else polls.
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
// else polls.
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
	delay := pollFirst
	for {
		ok, err := ready()
		if err != nil || ok {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, pollMax)
	}
}
