package chat

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// Handler serves the multi-turn pattern under path (say "/sessions"):
//
//	POST {path}                  body Turn: starts a session; streams its first turn, if it has messages
//	                             (201 with SessionInfo if not, or for Accept: application/json)
//	POST {path}/{id}/messages    body Message: sends a message; streams the turn that answers it
//	GET  {path}/{id}/stream      the session's stream, from a cursor, until the session ends
//
// Streams are SSE or NDJSON (by Accept; see [ContentTypeSSE],
// [ContentTypeNDJSON]) with the session's ID in [RunIDHeader]. A message's
// stream starts at its marker, or at the cursor ([StartIndexParam] or
// Last-Event-ID) if the request names one, so a client that passes the
// index after the last part it saw misses nothing, other senders'
// messages included; it ends with the turn that answers it ("end" says
// "running"). A message POSTed with Accept: application/json is answered
// 202 with SessionInfo, without a stream. An [IdempotencyKeyHeader] makes a retried POST
// start one session or deliver one message.
func (s *Session) Handler(c *workflow.Client, path string, opts ...HandlerOption) http.Handler {
	h := &sessionHandler{s: s, server: newServer(c, s.wf.Name(), s.a, opts)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+routePath(path), h.start)
	mux.HandleFunc("POST "+routePath(path)+"/{id}/messages", h.message)
	mux.HandleFunc("GET "+routePath(path)+"/{id}/stream", h.reconnect)
	return mux
}

type sessionHandler struct {
	*server
	s *Session
}

// SessionInfo answers a request that streams nothing.
type SessionInfo struct {
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId,omitempty"`
}

func (h *sessionHandler) start(w http.ResponseWriter, r *http.Request) {
	ct, streamed, err := framing(r)
	var from int64
	var key string
	if err == nil {
		from, _, err = cursor(r)
	}
	if err == nil {
		key, err = idempotencyKey(r)
	}
	var t Turn
	if err == nil {
		err = decodeBody(w, r, h.cfg.maxBody, &t)
	}
	var start []workflow.StartOption
	if err == nil {
		start, err = h.startOptions(r, key)
	}
	var run *workflow.Run[*agent.Result]
	if err == nil {
		run, err = h.s.Start(r.Context(), h.c, t, start...)
	}
	switch {
	case err != nil:
		writeError(w, err)
	case !streamed || len(t.Messages) == 0:
		w.Header().Set(RunIDHeader, run.ID)
		writeJSON(w, http.StatusCreated, SessionInfo{SessionID: run.ID})
	default:
		h.stream(w, r, run, ct, scope{from: from, turn: true, earlier: true})
	}
}

func (h *sessionHandler) message(w http.ResponseWriter, r *http.Request) {
	ct, streamed, err := framing(r)
	var from int64
	var given bool
	if err == nil {
		from, given, err = cursor(r)
	}
	var key string
	if err == nil {
		key, err = idempotencyKey(r)
	}
	var m Message
	if err == nil {
		err = decodeBody(w, r, h.cfg.maxBody, &m)
	}
	m.ID = cmp.Or(key, m.ID, "msg_"+rand.Text())
	var run *workflow.Run[*agent.Result]
	if err == nil {
		run, err = h.run(r, r.PathValue("id"))
	}
	if err == nil {
		err = h.send(r.Context(), run, m)
	}
	switch {
	case err != nil:
		writeError(w, err)
	case !streamed:
		w.Header().Set(RunIDHeader, run.ID)
		writeJSON(w, http.StatusAccepted, SessionInfo{SessionID: run.ID, MessageID: m.ID})
	default:
		h.stream(w, r, run, ct, scope{from: from, message: m.ID, earlier: given, turn: true})
	}
}

// framing is the stream a session's POST asks for: SSE or NDJSON, or
// none (streamed false) for a client that accepts only JSON.
func framing(r *http.Request) (contentType string, streamed bool, err error) {
	accept := r.Header.Get("Accept")
	if ct, ok := negotiate(accept); ok {
		return ct, true, nil
	}
	if strings.Contains(accept, "application/json") {
		return "", false, nil
	}
	return "", false, notAcceptable()
}

// send delivers m and says in HTTP terms why it could not.
func (h *sessionHandler) send(ctx context.Context, run *workflow.Run[*agent.Result], m Message) error {
	err := h.s.Send(ctx, h.c, run.ID, m)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, workflow.ErrInvalidPayload):
		return badRequest("%v", err)
	case errors.Is(err, workflow.ErrMaxEventsExceeded):
		return &httpError{http.StatusTooManyRequests, err.Error()}
	case errors.Is(err, ErrSessionEnded):
		return &httpError{http.StatusConflict, err.Error()}
	case errors.Is(err, workflow.ErrHookNotFound):
		return &httpError{http.StatusServiceUnavailable, "session " + run.ID + " is not taking messages yet; try again"}
	}
	return err
}
