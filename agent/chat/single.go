package chat

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// Turn is what a client sends to start a turn or a session: the
// conversation so far. In the single-turn pattern the client (or the
// application's database) owns it and sends all of it every time.
type Turn struct {
	Messages []agent.Message `json:"messages"`
}

// check refuses a conversation a model could not take: unknown roles,
// empty user messages, and (for a turn) one that does not end with the
// user's words.
func (t Turn) check(needsUserLast bool) error {
	for i, m := range t.Messages {
		switch m.Role {
		case agent.RoleUser:
			if strings.TrimSpace(m.Text) == "" {
				return badRequest("messages[%d]: a user message needs text", i)
			}
		case agent.RoleAssistant, agent.RoleTool:
		default:
			return badRequest("messages[%d]: unknown role %q (user, assistant or tool)", i, m.Role)
		}
	}
	if needsUserLast && (len(t.Messages) == 0 || t.Messages[len(t.Messages)-1].Role != agent.RoleUser) {
		return badRequest("messages must end with a user message")
	}
	return nil
}

// SingleTurn is the single-turn pattern: every user turn is a run of its
// own, on the code deployed when it starts, given the whole conversation.
// Define it once, at package level, like a workflow.
type SingleTurn struct {
	wf *workflow.Workflow[Turn, *agent.Result]
	a  *agent.Agent
}

// NewSingleTurn defines the workflow "chat.turn."+a.Name(), which runs one
// turn of a: the model, its tools, until it answers.
func NewSingleTurn(a *agent.Agent, opts ...workflow.DefineOption) *SingleTurn {
	wf := workflow.Define("chat.turn."+a.Name(), func(ctx workflow.Context, t Turn) (*agent.Result, error) {
		return a.Run(ctx, t.Messages)
	}, opts...)
	return &SingleTurn{wf: wf, a: a}
}

// Workflow returns the turn's workflow, for a worker's registry.
func (s *SingleTurn) Workflow() *workflow.Workflow[Turn, *agent.Result] { return s.wf }

// Start starts a turn.
func (s *SingleTurn) Start(ctx context.Context, c *workflow.Client, t Turn, opts ...workflow.StartOption) (*workflow.Run[*agent.Result], error) {
	if err := t.check(true); err != nil {
		return nil, err
	}
	return workflow.Start(ctx, c, s.wf, t, opts...)
}

// Handler serves the single-turn pattern under path (say "/chat"):
//
//	POST {path}                 body Turn: starts a turn and streams it
//	GET  {path}/{id}/stream     the turn's stream again, from a cursor
//
// Both stream the run's parts as SSE or NDJSON (by Accept; see
// [ContentTypeSSE], [ContentTypeNDJSON]) with the run's ID in
// [RunIDHeader], from the cursor ([StartIndexParam], or Last-Event-ID)
// until the run ends. A POST with an [IdempotencyKeyHeader] starts one
// run however often it is sent.
func (s *SingleTurn) Handler(c *workflow.Client, path string, opts ...HandlerOption) http.Handler {
	srv := newServer(c, s.wf.Name(), s.a, opts)
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+routePath(path), func(w http.ResponseWriter, r *http.Request) {
		ct, from, key, err := streamRequest(r)
		var t Turn
		if err == nil {
			err = decodeBody(w, r, srv.cfg.maxBody, &t)
		}
		var start []workflow.StartOption
		if err == nil {
			start, err = srv.startOptions(r, key)
		}
		var run *workflow.Run[*agent.Result]
		if err == nil {
			run, err = s.Start(r.Context(), c, t, start...)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		srv.stream(w, r, run, ct, scope{from: from})
	})
	mux.HandleFunc("GET "+routePath(path)+"/{id}/stream", srv.reconnect)
	return mux
}

// streamRequest reads what every streaming POST has: the framing the
// client accepts, its cursor and its idempotency key.
func streamRequest(r *http.Request) (contentType string, from int64, key string, err error) {
	ct, ok := negotiate(r.Header.Get("Accept"))
	if !ok {
		return "", 0, "", notAcceptable()
	}
	if from, _, err = cursor(r); err != nil {
		return "", 0, "", err
	}
	key, err = idempotencyKey(r)
	return ct, from, key, err
}

// routePath checks a handler's path: absolute, without a trailing slash.
func routePath(path string) string {
	if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.ContainsAny(path, "{} ") {
		panic(fmt.Sprintf("chat: handler path %q must start with / and not end with one", path))
	}
	return path
}
