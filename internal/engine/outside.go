package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// Cancelled is the error of a run that was cancelled.
type Cancelled struct {
	RunID  string
	Reason string
}

func (c *Cancelled) Error() string {
	if c.Reason == "" {
		return fmt.Sprintf("run %s was cancelled", c.RunID)
	}
	return fmt.Sprintf("run %s was cancelled: %s", c.RunID, c.Reason)
}

// appendAndWake appends one event from outside the run (a hook resume, a
// cancellation, a child's result) at the end of its log, then queues the
// run so a worker applies it.
func appendAndWake(ctx context.Context, w world.World, c *codec.Chain, runID string, ev world.Event, update *world.RunUpdate, now time.Time) error {
	if _, err := appendAtEnd(ctx, w, c, runID, ev, update, now, 0); err != nil {
		return err
	}
	return enqueue(ctx, w, world.Message{RunID: runID})
}

// appendRounds bounds how many lost slots one outside append follows
// when the run has no event limit; each means another writer appended
// first. With a limit the log's end bounds it: every lost slot moves the
// append one slot on, so a crowd of resumers (each a writer, each waking
// the run to write more) is followed to the end, not given up on.
const appendRounds = 100

// appendAtEnd appends one event at the end of a run's log, following the
// log as other writers fill it, and returns the slot it took. With a limit
// it refuses to write past slot limit (the run's MaxEvents). The event is
// sealed with the run's codec, which c opens.
func appendAtEnd(ctx context.Context, w world.World, c *codec.Chain, runID string, ev world.Event, update *world.RunUpdate, now time.Time, limit int) (int64, error) {
	run, err := w.GetRun(ctx, runID)
	if err != nil {
		return 0, err
	}
	if run.Status.Terminal() {
		return 0, fmt.Errorf("append to run %s: %w", runID, world.ErrRunFinished)
	}
	if ev, err = sealFor(ctx, c, run, ev); err != nil {
		return 0, err
	}
	ev.CreatedAt = now
	return appendFrom(ctx, w, runID, run.LastSlot+1, ev, update, limit, nil)
}

// appendFrom appends ev at slot from, or after the events other writers
// put there first, and returns the slot it took. seen, if set, is shown
// those events before each retry. With a limit it refuses to write past
// slot limit (the run's MaxEvents).
func appendFrom(ctx context.Context, w world.World, runID string, from int64, ev world.Event, update *world.RunUpdate, limit int, seen func(missed []world.Event) error) (int64, error) {
	for round := 0; ; round++ {
		if limit > 0 && from > int64(limit) {
			return 0, fmt.Errorf("append to run %s: its log holds %d events, its limit: %w", runID, from-1, ErrMaxEvents)
		}
		if limit <= 0 && round == appendRounds {
			return 0, fmt.Errorf("append to run %s: other writers took the end of the log %d times in a row", runID, appendRounds)
		}
		missed, err := w.AppendEvents(ctx, runID, from, []world.Event{ev}, update)
		if !errors.Is(err, world.ErrSlotTaken) {
			return from, err
		}
		if err := checkMissed(runID, from, missed); err != nil {
			return 0, err
		}
		if seen != nil {
			if err := seen(missed); err != nil {
				return 0, err
			}
		}
		from = missed[len(missed)-1].Slot + 1
	}
}

// checkMissed checks what a World returned for a lost slot: the events
// from slot from on, in order. Anything else (none, or an event whose slot
// is not where it sits, as a corrupted item's) would send the writer round
// again at the same slot for ever.
func checkMissed(runID string, from int64, missed []world.Event) error {
	if len(missed) == 0 {
		return fmt.Errorf("append to run %s: slot %d is taken, but the World returned no event there", runID, from)
	}
	for i, ev := range missed {
		if want := from + int64(i); ev.Slot != want {
			return fmt.Errorf("append to run %s: the World returned an event numbered %d at slot %d: the log is corrupt", runID, ev.Slot, want)
		}
	}
	return nil
}

// Cancel ends a run with a reason. The run's invocation, if one is live,
// sees the event, stops its steps (their contexts are cancelled) and exits.
// On a run that continued as new it cancels the latest run of the chain;
// encode returns that run's error as the error codec writes it.
//
// Like the run's own end, a cancellation releases the run's hook tokens
// before it is written, so that they are free once the run is seen ended:
// those the log records, and any whose creation lands before the
// cancellation (the append then loses its slot and learns of them).
func Cancel(ctx context.Context, w world.World, runID, reason string, encode func(runID string) json.RawMessage, now time.Time) error {
	run, err := Latest(ctx, w, runID) // one read where the run did not continue as new
	if err != nil {
		return err
	}
	if run.Status.Terminal() {
		return fmt.Errorf("cancel run %s: %w", run.ID, world.ErrRunFinished)
	}
	events, err := w.Events(ctx, run.ID, 0)
	if err != nil {
		return err
	}
	ev := world.Event{Type: world.RunCancelled, Payload: mustJSON(runFinishedPayload{Reason: reason}), CreatedAt: now}
	return endFromOutside(ctx, w, run.ID, events, ev, &world.RunUpdate{Status: world.StatusCancelled, Error: encode(run.ID)})
}

// endFromOutside appends a run's end (ev, with update) after its log
// events, releasing first the hook tokens the log records and any whose
// creation lands before the end, then queues a message, so that a worker
// does what follows a run's end (afterFinish): freeing its limiter slot,
// closing its streams, telling its parent.
//
// A second message, due endFollowUp after the end, is queued before the
// append: should the caller die between the append and the prompt
// message, nothing else would bring a worker, since a finished run is
// never overdue (world.Overdue), and the run would hold its slot and
// leave its parent waiting. Where the prompt message went out, the second
// costs one delivery that finds everything done.
func endFromOutside(ctx context.Context, w world.World, runID string, events []world.Event, ev world.Event, update *world.RunUpdate) error {
	release := func(events []world.Event) error {
		held, err := holdingsOf(events)
		if err != nil {
			return err
		}
		return releaseHooks(ctx, w, runID, held.hooks)
	}
	if err := release(events); err != nil {
		return err
	}
	if err := enqueue(ctx, w, world.Message{RunID: runID, DeliverAt: ev.CreatedAt.Add(endFollowUp)}); err != nil {
		return err
	}
	if _, err := appendFrom(ctx, w, runID, int64(len(events))+1, ev, update, 0, release); err != nil {
		return err
	}
	return enqueue(ctx, w, world.Message{RunID: runID})
}

// endFollowUp is how long after a run's end written from outside (a
// cancellation, the stuck-run check's failure) the message that stands in
// for a lost prompt one is due: long past the moment between the append
// and the prompt message, and short beside what a held limiter slot or a
// waiting parent would lose.
const endFollowUp = time.Minute
