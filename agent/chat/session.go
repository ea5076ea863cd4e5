package chat

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// Message is one message into a multi-turn session, from a user, a
// system event or another service. Every source sends it the same way,
// with [Session.Send] or the handler's messages route.
type Message struct {
	// ID names the message: a second delivery with the same ID (a retried
	// request) is dropped by the session. Send makes one up if empty.
	ID string `json:"id,omitempty"`
	// From attributes the message ("ana", "system", "payments"); the model
	// reads it as "[From] Text". Empty is the user.
	From string `json:"from,omitempty"`
	Text string `json:"text,omitempty"`
	// End ends the session once the messages before it are answered.
	End bool `json:"end,omitempty"`
}

// inbox is the hook a session's messages arrive on; its token is
// [SessionToken] of the run's ID.
var inbox = workflow.DefineHook(func(m Message) error {
	switch {
	case m.ID == "":
		return errors.New("a message needs an ID")
	case len(m.ID) > maxKeyLen:
		return errors.New("the message ID is too long")
	case !m.End && strings.TrimSpace(m.Text) == "":
		return errors.New("a message needs text")
	}
	return nil
})

// SessionToken is the token of the hook session sessionID takes messages on.
func SessionToken(sessionID string) string { return "chat:" + sessionID }

// Session is the multi-turn pattern: one run owns the conversation, its
// ID the session's. Messages arrive on a hook whenever they are sent,
// also while the model is mid-turn; the session queues them and takes all
// that are waiting between turns, in the order they arrived. Define it
// once, at package level, like a workflow.
type Session struct {
	wf       *workflow.Workflow[Turn, *agent.Result]
	a        *agent.Agent
	taken    *workflow.Step[[]Message, struct{}]
	maxTurns int
}

// DefaultMaxTurns bounds a session's model turns unless [WithMaxTurns]
// says otherwise; a session that reaches it ends, and later messages are
// refused.
const DefaultMaxTurns = 100

// SessionOption configures a Session.
type SessionOption func(*Session)

// WithMaxTurns bounds the session's model turns (default
// [DefaultMaxTurns]), which bounds its log.
func WithMaxTurns(n int) SessionOption { return func(s *Session) { s.maxTurns = max(n, 1) } }

// NewSession defines the workflow "chat.session."+a.Name() and its step
// "chat.session."+a.Name()+".taken", which writes the messages a turn
// takes to the run's stream (agent.PartMessage parts), so every reader
// sees who said what, in order with the answers.
func NewSession(a *agent.Agent, opts ...SessionOption) *Session {
	s := &Session{a: a, maxTurns: DefaultMaxTurns}
	for _, o := range opts {
		o(s)
	}
	name := "chat.session." + a.Name()
	s.taken = workflow.DefineStep(name+".taken", s.writeTaken)
	s.wf = workflow.Define(name, s.run)
	return s
}

// Workflow returns the session's workflow, for a worker's registry.
func (s *Session) Workflow() *workflow.Workflow[Turn, *agent.Result] { return s.wf }

// Start starts a session with the conversation so far (which may be
// empty: the session then waits for its first message). Its run's ID is
// the session's.
func (s *Session) Start(ctx context.Context, c *workflow.Client, t Turn, opts ...workflow.StartOption) (*workflow.Run[*agent.Result], error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	return workflow.Start(ctx, c, s.wf, t, opts...)
}

// ErrSessionEnded is the error of a message sent to a session whose run
// has ended. It also matches workflow.ErrHookNotFound.
var ErrSessionEnded = errors.New("chat: the session has ended")

// Send delivers m to session sessionID, where it waits for the next turn.
// A session that has just started takes a moment to listen: Send waits
// for it, up to 10 s. It fails with workflow.ErrHookNotFound for an
// unknown session, [ErrSessionEnded] for one that has ended, and
// workflow.ErrInvalidPayload for an empty message.
func (s *Session) Send(ctx context.Context, c *workflow.Client, sessionID string, m Message) error {
	if m.ID == "" {
		m.ID = "msg_" + rand.Text()
	}
	resume := func() error { return inbox.Resume(ctx, c, SessionToken(sessionID), m) }
	return untilHookExists(ctx, resume, func(err error) error {
		st, serr := workflow.RunOf[*agent.Result](c, sessionID).Status(ctx)
		switch {
		case errors.Is(serr, workflow.ErrRunNotFound):
			return err // no such run: the hook's error says it
		case serr != nil:
			return serr
		case st.Terminal():
			return fmt.Errorf("%w (%s): %w", ErrSessionEnded, st, err)
		}
		return nil
	})
}

// run is the session: a turn for what it has, then the messages that
// came meanwhile, until a message ends it or it has taken its turns.
func (s *Session) run(ctx workflow.Context, t Turn) (*agent.Result, error) {
	hook := inbox.Create(ctx, workflow.WithToken(SessionToken(ctx.RunID())))
	res := &agent.Result{Messages: t.Messages}
	pending, ended := len(t.Messages) > 0, false
	seen := map[string]bool{}
	for turns := 0; ; {
		if pending {
			r, err := s.a.Run(ctx, res.Messages)
			usage := res.Usage.Add(r.Usage)
			res, res.Usage = r, usage
			if err != nil {
				return res, err
			}
			turns++
		}
		if ended || turns >= s.maxTurns {
			return res, nil
		}
		batch, end, err := s.take(ctx, hook, seen)
		if err != nil {
			return res, err
		}
		for _, m := range batch {
			res.Messages = append(res.Messages, agent.UserMessage(m.words()))
		}
		pending, ended = len(batch) > 0, end
		if !pending && ended {
			return res, nil
		}
	}
}

// take waits for the next message and takes every other one already
// queued, dropping those it has seen (redeliveries), and records them in
// the run's stream. end is set if one of them ends the session.
func (s *Session) take(ctx workflow.Context, hook *workflow.Hook[Message], seen map[string]bool) (batch []Message, end bool, err error) {
	for !end && (len(batch) == 0 || hook.IsReady()) {
		m, err := hook.Receive(ctx)
		var invalid *workflow.InvalidPayloadError
		switch {
		case errors.As(err, &invalid):
			continue // sent around Send's validation; nothing to answer
		case err != nil:
			return batch, end, err
		case seen[m.ID]:
			continue
		}
		seen[m.ID] = true
		if m.End {
			end = true
		} else {
			batch = append(batch, m)
		}
	}
	if len(batch) > 0 {
		_, err = s.taken.Call(ctx, batch)
	}
	return batch, end, err
}

// words is the message as the model reads it.
func (m Message) words() string {
	if m.From == "" {
		return m.Text
	}
	return "[" + m.From + "] " + m.Text
}

// writeTaken is the step that marks the messages a turn takes in the
// run's stream. A retried step writes them again; readers look for the
// first marker of a message.
func (s *Session) writeTaken(ctx context.Context, batch []Message) (struct{}, error) {
	w, err := workflow.Writer[agent.Part](ctx, s.a.Namespace())
	if err != nil {
		return struct{}{}, err
	}
	for _, m := range batch {
		if err := w.Write(agent.Part{Type: agent.PartMessage, MessageID: m.ID, From: m.From, Text: m.Text}); err != nil {
			return struct{}{}, err
		}
	}
	return struct{}{}, nil
}
