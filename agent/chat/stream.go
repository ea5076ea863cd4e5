package chat

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/world"
)

// HandlerOption configures a session's or a turn's http.Handler.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	maxBody   int64
	heartbeat time.Duration
	caller    func(*http.Request) (string, error) // WithCaller
}

// DefaultHeartbeat is how long a stream may stay silent before the
// handler writes a keep-alive (an SSE comment, an empty NDJSON line), so
// that proxies and load balancers keep an idle connection open.
const DefaultHeartbeat = 15 * time.Second

// WithMaxBodyBytes bounds request bodies (default [DefaultMaxBodyBytes]);
// a larger one is refused with 413 before anything is started or sent.
func WithMaxBodyBytes(n int64) HandlerOption { return func(c *handlerConfig) { c.maxBody = max(n, 1) } }

// WithHeartbeat sets the keep-alive interval (default [DefaultHeartbeat]).
func WithHeartbeat(d time.Duration) HandlerOption {
	return func(c *handlerConfig) { c.heartbeat = max(d, time.Millisecond) }
}

// server is what both patterns' handlers share: the client, the workflow
// whose runs they serve, and the streaming of a run's parts.
type server struct {
	c         *workflow.Client
	workflow  string
	namespace string
	cfg       handlerConfig
}

func newServer(c *workflow.Client, wf string, a *agent.Agent, opts []HandlerOption) *server {
	cfg := handlerConfig{maxBody: DefaultMaxBodyBytes, heartbeat: DefaultHeartbeat}
	for _, o := range opts {
		o(&cfg)
	}
	return &server{c: c, workflow: wf, namespace: a.Namespace(), cfg: cfg}
}

// scope says which of a run's parts a response carries.
type scope struct {
	from int64
	// message, if set, is the ID of the message the response answers:
	// parts before its marker (agent.PartMessage) are left out unless
	// earlier is set (the client named a cursor).
	message string
	earlier bool
	// turn ends the response after the turn that answers the message (its
	// finish part); otherwise it ends with the run.
	turn bool
}

// run returns the run with ID id if it is one of this handler's
// workflow, started by the request's caller (WithCaller): any other ID is
// an unknown session.
func (s *server) run(r *http.Request, id string) (*workflow.Run[*agent.Result], error) {
	info, err := s.c.World().GetRun(r.Context(), id)
	var owned bool
	if err == nil && info.Workflow == s.workflow {
		owned, err = s.cfg.owns(r, info)
	}
	if err != nil || !owned {
		if err == nil || errors.Is(err, world.ErrRunNotFound) {
			return nil, &httpError{http.StatusNotFound, "unknown session " + strconv.Quote(id)}
		}
		return nil, err
	}
	return workflow.RunOf[*agent.Result](s.c, id), nil
}

// reconnect serves GET .../{id}/stream: the run's parts from the cursor
// until the run ends.
func (s *server) reconnect(w http.ResponseWriter, r *http.Request) {
	ct, ok := negotiate(r.Header.Get("Accept"))
	from, _, err := cursor(r)
	if err == nil && !ok {
		err = notAcceptable()
	}
	var run *workflow.Run[*agent.Result]
	if err == nil {
		run, err = s.run(r, r.PathValue("id"))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.stream(w, r, run, ct, scope{from: from})
}

func notAcceptable() error {
	return &httpError{http.StatusNotAcceptable, "the stream is served as " + ContentTypeSSE + " or " + ContentTypeNDJSON}
}

// stream sends the run's parts in sc as they come, with a keep-alive
// when it is quiet, and closes with the run's status. A client that goes
// away stops it; it reconnects from the index after the last part it got.
func (s *server) stream(w http.ResponseWriter, r *http.Request, run *workflow.Run[*agent.Result], contentType string, sc scope) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	w.Header().Set(RunIDHeader, run.ID)
	fw := newFrameWriter(w, contentType)
	chunks := make(chan chunk)
	go read(ctx, run, s.namespace, sc.from, chunks)
	tick := time.NewTicker(s.cfg.heartbeat)
	defer tick.Stop()
	mine := sc.message == ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if fw.comment() != nil {
				return
			}
			continue
		case c, more := <-chunks:
			switch {
			case !more:
				s.end(ctx, run, fw)
				return
			case c.err != nil:
				_ = fw.fail(c.err.Error())
				return
			}
			var p agent.Part
			_ = c.Decode(&p) // a chunk that is not a Part is still sent; it cannot be the marker
			if !mine && p.Type == agent.PartMessage && p.MessageID == sc.message {
				mine = true
			}
			if (mine || sc.earlier) && fw.part(c.Index, c.Data) != nil {
				return
			}
			if mine && sc.turn && p.Type == agent.PartFinish {
				s.end(ctx, run, fw)
				return
			}
		}
		tick.Reset(s.cfg.heartbeat)
	}
}

// end closes the response with the run's status, "running" for one that
// goes on (a session after a turn; pending, to the World, until its first
// write lands).
func (s *server) end(ctx context.Context, run *workflow.Run[*agent.Result], fw frameWriter) {
	st, err := run.Status(ctx)
	if err != nil {
		_ = fw.fail(err.Error())
		return
	}
	if !st.Terminal() {
		st = workflow.StatusRunning
	}
	_ = fw.end(string(st))
}

type chunk struct {
	workflow.StreamChunk
	err error
}

// read follows the run's stream until it ends, an error, or ctx.
func read(ctx context.Context, run *workflow.Run[*agent.Result], namespace string, from int64, out chan<- chunk) {
	defer close(out)
	for c, err := range run.Readable(ctx, namespace, from) {
		if ctx.Err() != nil {
			return
		}
		select {
		case out <- chunk{c, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}
