package workflow

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// ResumeHook sends payload to the hook holding token and wakes its run. It
// returns once the payload is durably recorded in the run's log. Resuming
// a responding hook this way sends a message nobody waits to be answered:
// its reply, if the workflow sends one, is dropped.
func ResumeHook[T any](ctx context.Context, c *Client, token string, payload T) error {
	raw, err := marshal("hook payload", payload)
	if err != nil {
		return err
	}
	_, err = c.deliver(ctx, token, newResumeID(), func(world.Hook) (json.RawMessage, error) { return raw, nil })
	return err
}

// deliver records the payload message gives for the hook holding token,
// following the token if another run takes it over meanwhile (see
// engine.Resume). message's error refuses a hook before anything is
// written.
func (c *Client) deliver(ctx context.Context, token, resumeID string, message func(world.Hook) (json.RawMessage, error)) (world.Hook, error) {
	h, err := engine.Resume(ctx, c.world, c.codec, token, resumeID, message, c.now(), c.maxEvents)
	switch {
	case errors.Is(err, world.ErrHookNotFound):
		return h, fmt.Errorf("%w: %q", ErrHookNotFound, token)
	case errors.Is(err, engine.ErrMaxEvents):
		return h, fmt.Errorf("%w: run %s: its log is full, it takes no more messages", ErrMaxEventsExceeded, h.RunID)
	}
	return h, err
}

// newResumeID names one resume call. It is unguessable because it also
// names the call's reply stream.
func newResumeID() string { return "rs_" + rand.Text() }

// HookInfo describes a hook, as resumers see it.
type HookInfo struct {
	Token     string
	RunID     string // the run that owns the token
	Responds  bool   // its resumers get a reply: a responding hook, or a manual webhook
	Webhook   bool   // reachable on the public webhook route
	Metadata  json.RawMessage
	CreatedAt time.Time
	// Retained is set on a hook its run has released, whose token stays
	// blocked until RetainUntil ([WithMinRetention]). It cannot be
	// resumed.
	Retained    bool
	RetainUntil time.Time
}

// GetHook returns the hook holding token, live or retained, or an error
// matching [ErrHookNotFound].
func (c *Client) GetHook(ctx context.Context, token string) (HookInfo, error) {
	h, err := c.world.GetHook(ctx, token)
	if errors.Is(err, world.ErrHookNotFound) {
		return HookInfo{}, fmt.Errorf("%w: %q", ErrHookNotFound, token)
	}
	if err != nil {
		return HookInfo{}, err
	}
	info := HookInfo{Token: h.Token, RunID: h.RunID, Webhook: h.Kind == kindWebhook, Metadata: h.Metadata,
		CreatedAt: h.CreatedAt, Retained: h.Disposed, RetainUntil: h.RetainUntil}
	info.Responds = h.Kind == kindResponding
	if info.Webhook {
		var meta webhookMeta
		if err := json.Unmarshal(h.Metadata, &meta); err != nil {
			return HookInfo{}, fmt.Errorf("workflow: hook %q: reading webhook metadata: %w", token, err)
		}
		info.Metadata, info.Responds = meta.User, meta.Manual
	}
	return info, nil
}
