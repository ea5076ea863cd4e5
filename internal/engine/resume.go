package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// maxFollows bounds how many times one resume follows a token from run to
// run; each follow means another run took the token over meanwhile.
const maxFollows = 8

// Resume records a message for the hook holding token in its run's log (or
// its inbox, on a World with one: see deliver) and wakes the run. message gives the payload to record for the hook found,
// which it may inspect (its kind, its metadata); its error stops the
// resume before anything is written. It is asked again for each hook a
// takeover sends the message on to.
//
// A resume can race a takeover (a run claiming the token with force): the
// resumer reads the owner, the token changes hands, the message lands in
// the old owner's log. The old owner only takes messages recorded before
// the takeover event in its log, so after appending the resumer checks
// which side of that event it landed on, and if it was too late it
// delivers the message, with the same resume ID, to the new owner. Either
// way exactly one run gets it. It returns the hook that got the message;
// an unknown, disposed or ended hook is an error matching
// world.ErrHookNotFound. A run whose log holds maxEvents events takes no
// more messages: the error matches ErrMaxEvents.
func Resume(ctx context.Context, w world.World, c *codec.Chain, token, resumeID string, message func(world.Hook) (json.RawMessage, error), now time.Time, maxEvents int) (got world.Hook, err error) {
	ctx, span := StartSpan(ctx, "workflow.hook.resume", trace.SpanKindProducer)
	defer func() {
		span.SetAttributes(attrRunID.String(got.RunID))
		EndSpan(span, err)
		if err == nil {
			hookResumes.Add(ctx, 1)
		}
	}()
	var prev world.Hook
	for range maxFollows {
		h, err := w.GetHook(ctx, token)
		if err != nil {
			return h, err
		}
		if h.Disposed || sameClaim(h, prev) {
			return h, fmt.Errorf("hook %q: %w", token, world.ErrHookNotFound)
		}
		prev = h
		payload, err := message(h)
		if err != nil {
			return h, err
		}
		ev := world.Event{Type: world.HookReceived, CorrelationID: h.CorrelationID,
			Payload: mustJSON(hookReceivedPayload{ResumeID: resumeID, Payload: payload})}
		if inbox := capabilitiesOf(w).inbox; inbox != nil {
			delivered, err := deliver(ctx, w, c, inbox, h, world.InboxMessage{ID: resumeID, Event: ev}, now, maxEvents)
			if err != nil || delivered {
				return h, err
			}
			continue // the hook changed meanwhile: follow the token
		}
		slot, err := appendAtEnd(ctx, w, c, h.RunID, ev, nil, now, maxEvents)
		if errors.Is(err, world.ErrRunFinished) || errors.Is(err, world.ErrRunNotFound) {
			continue // the owner ended: unless the token moved on, the next read says not found
		}
		if err != nil {
			return h, err
		}
		if err := enqueue(ctx, w, world.Message{RunID: h.RunID}); err != nil {
			return h, err
		}
		late, err := takenOverBefore(ctx, w, h, slot)
		if err != nil || !late {
			return h, err
		}
	}
	return prev, fmt.Errorf("hook %q changed hands %d times during one resume", token, maxFollows)
}

func sameClaim(a, b world.Hook) bool {
	return a.RunID == b.RunID && a.CorrelationID == b.CorrelationID
}

// takenOverBefore reports whether another run took the token from h
// before the message at slot reached h's log. If h still holds the token
// now, any takeover comes later (a takeover claims the token before it
// tells the old owner), so the common case costs one read.
func takenOverBefore(ctx context.Context, w world.World, h world.Hook, slot int64) (bool, error) {
	cur, err := w.GetHook(ctx, h.Token)
	switch {
	case errors.Is(err, world.ErrHookNotFound):
		return false, nil // released, not taken: the message stays where it is
	case err != nil:
		return false, err
	case sameClaim(cur, h):
		return false, nil
	}
	evs, err := w.Events(ctx, h.RunID, 0)
	if err != nil {
		return false, err
	}
	for _, ev := range evs {
		if ev.Slot >= slot {
			break
		}
		if ev.Type != world.HookConflict || ev.CorrelationID != h.CorrelationID {
			continue
		}
		p, err := decodePayload[hookConflictPayload](ev)
		if err != nil {
			return false, err
		}
		if p.ForceClaimed {
			return true, nil
		}
	}
	return false, nil
}

// RejectMessage answers the reply stream of resume resumeID with frame, a
// refusal the workflow wrote because it could not take the message, and
// closes it, unless something answered it already. A replay that delivers
// the message again comes here again; then the stream is already closed,
// and this costs one read. A failure is logged: the caller learns at the
// run's end that no reply came.
func (c *Ctx) RejectMessage(resumeID string, frame []byte) {
	inv := c.inv
	name := ReplyStream(resumeID)
	chunks, closed, err := inv.e.World.ReadStream(inv.ctx, name, 0)
	if err == nil && (closed || len(chunks) > 0) {
		return
	}
	if err == nil {
		err = inv.e.World.WriteStream(inv.ctx, name, [][]byte{frame})
	}
	if err == nil {
		err = inv.e.World.CloseStream(inv.ctx, name)
	}
	if err != nil && !errors.Is(err, world.ErrStreamClosed) {
		inv.logAt(slog.LevelWarn, "workflow: telling a caller its message was rejected failed", "err", err)
	}
}
