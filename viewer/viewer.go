// Package viewer is a web page of a World's runs: a list with filters and
// live status, and for each run a timeline of its steps, attempts,
// retries, sleeps, hooks, resumes and child runs, its payloads and errors,
// updated while the run moves.
//
// Mount it anywhere; it works over every World and is read-only unless
// WithCancel is given:
//
//	mux.Handle("/runs/", http.StripPrefix("/runs", viewer.New(w)))
//
// # What a mounting application adds
//
// The viewer has no login: whoever reaches it reads every run (decrypted,
// with WithPayloadCodec) and, with WithCancel, cancels them. It answers
// only requests whose Host is loopback or a name given to
// WithAllowedHosts, so that a page on another site cannot reach a viewer on
// the operator's machine by DNS rebinding, and WithCancel's POST refuses
// cross-site requests ([http.CrossOriginProtection]). Served anywhere but
// loopback, it needs the application's own authentication in front: wrap
// the handler, so that nothing reaches it unauthenticated.
//
//	v := viewer.New(w, viewer.WithAllowedHosts("ops.example.com"))
//	mux.Handle("/runs/", http.StripPrefix("/runs", requireOperator(v)))
//
// where requireOperator is the application's middleware (a session check,
// an OIDC proxy's header, mutual TLS) that answers 401 or 403 itself and
// calls v only for an operator.
//
// The pages are plain HTML, CSS and a little JavaScript embedded in the
// binary: nothing is fetched from elsewhere and nothing is built.
package viewer

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

//go:embed static
var static embed.FS

// Option configures New.
type Option func(*handler)

// WithPayloadCodec decodes sealed runs' payloads (package codec) with c.
// Without it, or without a run's key, the viewer shows them as
// "(encrypted)" and says why.
func WithPayloadCodec(c *codec.Chain) Option { return func(h *handler) { h.codec = c } }

// WithCancel shows a cancel button on unfinished runs and accepts the
// requests it sends. Without it the viewer changes nothing.
func WithCancel() Option { return func(h *handler) { h.allowCancel = true } }

type handler struct {
	w           world.World
	client      *workflow.Client
	allowCancel bool
	codec       *codec.Chain
	mux         *http.ServeMux
	hosts       []string // names besides loopback it answers (WithAllowedHosts)
}

// New returns the viewer of w's runs.
func New(w world.World, opts ...Option) http.Handler {
	h := &handler{w: w, client: workflow.NewClient(w), mux: http.NewServeMux()}
	for _, o := range opts {
		o(h)
	}
	files, _ := fs.Sub(static, "static")
	h.mux.Handle("GET /", http.FileServerFS(files))
	h.mux.HandleFunc("GET /api/runs", h.listRuns)
	h.mux.HandleFunc("GET /api/run", h.getRun)
	// A cancel is a POST from the viewer's own page: a form or script on
	// another site cannot make the browser send one.
	h.mux.Handle("POST /api/cancel", http.NewCrossOriginProtection().Handler(http.HandlerFunc(h.cancel)))
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if !h.allowedHost(r) {
		refuseHost(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

type runJSON struct {
	ID         string            `json:"id"`
	Workflow   string            `json:"workflow"`
	Status     world.RunStatus   `json:"status"`
	Attributes map[string]string `json:"attributes,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
	UpdatedAt  time.Time         `json:"updatedAt"`
	LastSlot   int64             `json:"lastSlot"`
	Input      json.RawMessage   `json:"input,omitempty"`
	Output     json.RawMessage   `json:"output,omitempty"`
	Error      json.RawMessage   `json:"error,omitempty"`
	// Source is a dynamic run's stored code (its input is then the input
	// the code was called with); SourceError says why it cannot be shown.
	Source      *dynsource.Source `json:"source,omitempty"`
	SourceError string            `json:"sourceError,omitempty"`
}

func toJSON(r world.Run, full bool) runJSON {
	out := runJSON{ID: r.ID, Workflow: r.Workflow, Status: r.Status, Attributes: r.Attributes,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, LastSlot: r.LastSlot}
	if !full {
		return out
	}
	out.Input, out.Output, out.Error = r.Input, r.Output, r.Error
	switch in, ok, err := dynsource.Of(r.Workflow, r.Input); {
	case err != nil:
		out.SourceError = err.Error()
	case ok:
		out.Source, out.Input = &in.Source, in.Input
	}
	return out
}

// listRuns serves a page of runs: ?workflow=&status=&attr=k=v&cursor=.
func (h *handler) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	filter := world.RunFilter{Workflow: q.Get("workflow"), Status: world.RunStatus(q.Get("status")), Cursor: q.Get("cursor"), Limit: 50}
	if filter.Status != "" && !knownStatus(filter.Status) {
		http.Error(w, "unknown status "+strconv.Quote(q.Get("status")), http.StatusBadRequest)
		return
	}
	for _, kv := range q["attr"] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			http.Error(w, "attr wants key=value, got "+strconv.Quote(kv), http.StatusBadRequest)
			return
		}
		if filter.Attributes == nil {
			filter.Attributes = map[string]string{}
		}
		filter.Attributes[k] = v
	}
	page, err := h.w.ListRuns(r.Context(), filter)
	if err != nil {
		serverError(w, err)
		return
	}
	runs := make([]runJSON, len(page.Runs))
	for i, run := range page.Runs {
		runs[i] = toJSON(run, false)
	}
	writeJSON(w, map[string]any{"runs": runs, "next": page.NextCursor, "canCancel": h.allowCancel})
}

// getRun serves a run, its log and its timeline: ?id=.
func (h *handler) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := h.w.GetRun(r.Context(), r.URL.Query().Get("id"))
	if errors.Is(err, world.ErrRunNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if err != nil {
		serverError(w, err)
		return
	}
	events, err := h.w.Events(r.Context(), run.ID, 0)
	if err != nil {
		serverError(w, err)
		return
	}
	run, events, unreadable := engine.ForReading(r.Context(), h.codec, run, events)
	page := map[string]any{
		"run": toJSON(run, true), "events": events, "rows": rows(run, events),
		"now": time.Now(), "canCancel": h.allowCancel,
	}
	if unreadable != nil {
		page["unreadable"] = unreadable.Error()
	}
	writeJSON(w, page)
}

func (h *handler) cancel(w http.ResponseWriter, r *http.Request) {
	if !h.allowCancel {
		http.Error(w, "this viewer is read-only (start it with --allow-cancel to cancel runs)", http.StatusForbidden)
		return
	}
	run, err := workflow.GetRun[any](r.Context(), h.client, r.FormValue("id"))
	if err == nil {
		err = run.Cancel(r.Context(), r.FormValue("reason"))
	}
	switch {
	case errors.Is(err, workflow.ErrRunNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, workflow.ErrRunFinished):
		http.Error(w, err.Error(), http.StatusConflict)
	case err != nil:
		serverError(w, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func knownStatus(s world.RunStatus) bool {
	switch s {
	case world.StatusPending, world.StatusRunning, world.StatusCompleted, world.StatusFailed, world.StatusCancelled:
		return true
	}
	return false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

func serverError(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusBadGateway)
}
