package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/stream"
	"github.com/lambdaworkflow/workflow/world"
)

// Responding hook errors, matched with errors.Is.
var (
	// ErrHookResponseNotSent: the run ended without answering the message.
	ErrHookResponseNotSent = stream.ErrHookResponseNotSent
	// ErrNotRespondingHook: ResumeRespondingHook on a hook that does not
	// reply (a plain hook), or on a webhook (use ResumeWebhook).
	ErrNotRespondingHook = errors.New("workflow: not a responding hook")
	// ErrAlreadyResponded: a second Respond to the same message.
	ErrAlreadyResponded = stream.ErrAlreadyResponded
	// ErrNotInStep: a step-only call (Respond, Writer) made elsewhere.
	ErrNotInStep = errors.New("workflow: only a step can do this; pass the step's context.Context")
	// ErrNoReplyChannel: Respond on a message whose sender waits for no
	// reply (a webhook that is not manual).
	ErrNoReplyChannel = errors.New("workflow: the message has no reply channel")
	// ErrHookMessageRejected: the workflow could not take the message (it
	// does not decode into the hook's type), so no reply will come.
	ErrHookMessageRejected = errors.New("workflow: the workflow rejected the message")
	// ErrReplyRestarted is yielded by a streamed reply when the step that
	// was sending it failed and its retry sends the reply again from the
	// top: drop what was received so far and keep reading.
	ErrReplyRestarted = stream.ErrReplyRestarted
)

// RespondingHook is a Hook whose resumers wait for an answer: each message
// arrives in a HookMessage envelope, and a step answers it with Respond.
// The caller of ResumeRespondingHook gets that answer back, on a reply
// channel of its own.
//
//	h := workflow.CreateRespondingHook[Query, Quote](ctx, workflow.WithToken("quotes:"+id))
//	for msg, err := range h.All(ctx) {
//		if err != nil { return err }
//		if _, err := reply.Call(ctx, msg); err != nil { return err } // the step calls msg.Respond
//	}
type RespondingHook[M, R any] struct {
	hookCore
	// replies is false for webhooks that answer their callers themselves:
	// their messages carry no reply channel.
	replies bool
}

// CreateRespondingHook creates a responding hook in the calling workflow.
// Unlike a webhook it may have a deterministic token, and it is not
// reachable over public HTTP: resume it from your own code.
func CreateRespondingHook[M, R any](ctx Context, opts ...HookOption) *RespondingHook[M, R] {
	return newRespondingHook[M, R](ctx, hookOptions(kindResponding, opts), callSite())
}

func newRespondingHook[M, R any](ctx Context, o engine.HookOptions, site string) *RespondingHook[M, R] {
	return &RespondingHook[M, R]{hookCore: createHook(ctx, o, site), replies: o.Replies}
}

// Receive waits for the next message (see Hook.Receive).
func (h *RespondingHook[M, R]) Receive(ctx Context) (HookMessage[M, R], error) {
	return receive(ctx, h.hookCore, h.decoder(ctx))
}

// All iterates over the messages as they arrive (see Hook.All).
func (h *RespondingHook[M, R]) All(ctx Context) iter.Seq2[HookMessage[M, R], error] {
	return all(ctx, h.hookCore, h.decoder(ctx))
}

// decoder decodes messages and answers the caller of one that does not
// decode with [ErrHookMessageRejected] at once: no step will reply to it.
func (h *RespondingHook[M, R]) decoder(ctx Context) func(engine.HookMessage) (HookMessage[M, R], error) {
	return func(msg engine.HookMessage) (HookMessage[M, R], error) {
		m, err := h.decode(msg)
		if err != nil && m.replyTo != "" {
			rejectMessage(ctx, m.replyTo, err)
		}
		return m, err
	}
}

func (h *RespondingHook[M, R]) decode(msg engine.HookMessage) (HookMessage[M, R], error) {
	m := HookMessage[M, R]{}
	if h.replies {
		m.replyTo = msg.ResumeID
	}
	if err := decodeJSON(msg.Payload, &m.Data); err != nil {
		return m, fmt.Errorf("workflow: hook %q: decoding message into %T: %w", h.op.Name, m.Data, err)
	}
	return m, nil
}

// HookMessage is one message to a responding hook: the payload its sender
// sent, and the way back to that sender. Pass it to a step, which answers
// with Respond. It encodes to JSON, so it can be a step's input.
type HookMessage[M, R any] struct {
	// Data is the payload the resumer sent.
	Data M
	// replyTo is the resume that sent the message; it names the reply
	// stream.
	replyTo string
}

// Respond sends the reply to the caller that sent this message. It works
// only in a step (pass the step's ctx), and only once per message: a
// second call fails with [ErrAlreadyResponded]. The reply can be any value
// that encodes to JSON, or a Stream whose values the caller reads as they
// are produced.
//
// If the step fails and is retried, the retry responds again and the
// caller gets the retry's reply (a streamed reply it was reading says
// ErrReplyRestarted and starts over). If the caller has given up, the
// reply is dropped and Respond still succeeds.
func (m HookMessage[M, R]) Respond(ctx context.Context, reply R) error {
	return respond(ctx, m.replyTo, reply)
}

type hookMessageJSON[M any] struct {
	Data    M      `json:"data"`
	ReplyTo string `json:"replyTo,omitempty"`
}

// MarshalJSON encodes the message, with its reply channel, for a step.
func (m HookMessage[M, R]) MarshalJSON() ([]byte, error) {
	return json.Marshal(hookMessageJSON[M]{Data: m.Data, ReplyTo: m.replyTo})
}

// UnmarshalJSON decodes a message encoded by MarshalJSON.
func (m *HookMessage[M, R]) UnmarshalJSON(b []byte) error {
	var j hookMessageJSON[M]
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	m.Data, m.replyTo = j.Data, j.ReplyTo
	return nil
}

// ResumeOption configures ResumeRespondingHook.
type ResumeOption func(*resumeConfig)

type resumeConfig struct{ timeout time.Duration }

// WithReplyTimeout bounds the wait for the reply (beyond ctx's own
// deadline). For a streamed reply it bounds the wait for the reply to
// start; the context given to Stream.All governs the rest.
func WithReplyTimeout(d time.Duration) ResumeOption {
	return func(c *resumeConfig) { c.timeout = d }
}

// ResumeRespondingHook sends msg to the responding hook holding token and
// waits for the workflow's reply. It fails with [ErrHookResponseNotSent] if
// the run ends without replying, with ctx's error (or
// context.DeadlineExceeded after [WithReplyTimeout]) if the reply does not
// come in time, and with [ErrNotRespondingHook], having written nothing, if
// the hook does not reply. Giving up does not disturb the workflow.
func ResumeRespondingHook[M, R any](ctx context.Context, c *Client, token string, msg M, opts ...ResumeOption) (R, error) {
	var cfg resumeConfig
	for _, o := range opts {
		o(&cfg)
	}
	var zero R
	raw, err := marshal("hook message", msg)
	if err != nil {
		return zero, err
	}
	resumeID := newResumeID()
	message := func(h world.Hook) (json.RawMessage, error) { return raw, vetResponding(h) }
	if _, err := c.deliver(ctx, token, resumeID, message); err != nil {
		return zero, err
	}
	return awaitReply[R](ctx, c, token, resumeID, cfg.timeout)
}

func vetResponding(h world.Hook) error {
	switch h.Kind {
	case kindResponding:
		return nil
	case kindWebhook:
		return fmt.Errorf("%w: hook %q is a webhook: resume it with ResumeWebhook", ErrNotRespondingHook, h.Token)
	default:
		return fmt.Errorf("%w: hook %q does not reply: resume it with ResumeHook", ErrNotRespondingHook, h.Token)
	}
}
