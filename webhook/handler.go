// Package webhook serves the public webhook route,
// /.well-known/workflow/v1/webhook/{token}, in any Go HTTP server:
//
//	mux.Handle(webhook.Pattern, webhook.NewHandler(client))
//
// A request to a webhook's URL is delivered to its workflow as a
// workflow.WebhookRequest, and answered the way the webhook was created to
// answer: 202 Accepted, a static response, or (manual, [workflow.WithManualResponse]) the response a step
// sends, streamed to the caller chunk by chunk as the step writes it.
package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow"
)

// Pattern is the route to register the handler on in an http.ServeMux.
const Pattern = workflow.WebhookPath + "{token}"

// DefaultMaxBody is the largest request body a Handler takes unless
// told otherwise (WithMaxBody).
const DefaultMaxBody = 1 << 20

// Handler serves webhook calls. Every method is accepted. A token that is
// not a live webhook (unknown, ended, a plain or responding hook, longer
// than a generated token) gets 404 with an empty body, so the route does
// not tell which tokens exist, and tokens never appear in its logs; a
// body over the limit (WithMaxBody) gets 413 and is not recorded; a run
// whose log is full (workflow.WithMaxEvents) gets 429.
type Handler struct {
	client  *workflow.Client
	maxBody int64
	logger  *slog.Logger
}

// Option configures NewHandler.
type Option func(*Handler)

// WithMaxBody sets the largest request body the handler reads (default
// DefaultMaxBody).
func WithMaxBody(n int64) Option { return func(h *Handler) { h.maxBody = n } }

// WithLogger sets where the handler reports failed calls (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(h *Handler) { h.logger = l } }

// NewHandler returns a Handler resuming webhooks through c.
func NewHandler(c *workflow.Client, opts ...Option) *Handler {
	h := &Handler{client: c, maxBody: DefaultMaxBody, logger: slog.Default()}
	for _, o := range opts {
		o(h)
	}
	return h
}

// ServeHTTP implements http.Handler. The token is the {token} path value
// when the handler is registered on Pattern, else what follows
// workflow.WebhookPath in the request's path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	if token == "" {
		token, _ = strings.CutPrefix(r.URL.Path, workflow.WebhookPath)
	}
	if token == "" || strings.Contains(token, "/") {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	ctx, span := tracer.Start(otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header)),
		"workflow.webhook.request", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method)))
	defer span.End()
	r = r.WithContext(ctx)
	req, err := h.request(w, r)
	var resp workflow.WebhookResponse
	if err == nil {
		resp, err = h.client.ResumeWebhook(r.Context(), token, req)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, workflow.ErrHookNotFound), errors.Is(err, workflow.ErrNotWebhook):
		w.WriteHeader(http.StatusNotFound)
		return
	case errors.As(err, &tooLarge):
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	case errors.Is(err, workflow.ErrMaxEventsExceeded):
		// The run's log is full: it takes no more calls, from anyone.
		w.WriteHeader(http.StatusTooManyRequests)
		return
	case err != nil && r.Context().Err() != nil:
		return // the caller has gone
	case err != nil:
		h.logger.ErrorContext(r.Context(), "workflow: webhook call failed", "err", redact(err, token))
		span.SetStatus(codes.Error, redact(err, token))
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if err := streamResponse(r.Context(), w, resp); err != nil && r.Context().Err() == nil {
		// Part of the body is out and the rest will not come (the step
		// was retried, or the run ended): cut the connection so the caller
		// sees a broken response, not a short one that looks complete.
		h.logger.ErrorContext(r.Context(), "workflow: webhook response broke off", "err", redact(err, token))
		panic(http.ErrAbortHandler)
	}
}

// redact is err's message without the token: a token is the webhook's
// only credential, and logs are read by more people than hold it.
func redact(err error, token string) string {
	return strings.ReplaceAll(err.Error(), token, "[token]")
}

// request reads r into what the workflow receives.
func (h *Handler) request(w http.ResponseWriter, r *http.Request) (workflow.WebhookRequest, error) {
	req := workflow.WebhookRequest{Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone()}
	if r.Body == nil {
		return req, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		return req, fmt.Errorf("reading the webhook request: %w", err)
	}
	req.Body = body
	return req, nil
}

// writeResponse sends the response's head and Body, then its Stream's
// chunks as they arrive, flushing each to the caller when w can flush.
func writeResponse(ctx context.Context, w http.ResponseWriter, resp workflow.WebhookResponse) error {
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(cmp.Or(resp.Status, http.StatusOK))
	flusher, _ := w.(http.Flusher)
	send := func(chunk []byte) bool {
		if _, err := w.Write(chunk); err != nil {
			return false // the caller has gone; nothing to tell it
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if len(resp.Body) > 0 && !send(resp.Body) {
		return nil
	}
	for chunk, err := range resp.Stream.All(ctx) {
		if err != nil {
			return err
		}
		if len(chunk) > 0 && !send(chunk) {
			return nil
		}
	}
	return nil
}

// tracer traces webhook requests through the global provider (a no-op
// unless the program installs one).
var tracer = otel.Tracer("github.com/lambdaworkflow/workflow/webhook")

// streamResponse writes resp in a span of its own: a streamed body lasts
// as long as the step that sends it.
func streamResponse(ctx context.Context, w http.ResponseWriter, resp workflow.WebhookResponse) error {
	ctx, span := tracer.Start(ctx, "workflow.reply.stream")
	defer span.End()
	err := writeResponse(ctx, w, resp)
	if err != nil {
		span.SetStatus(codes.Error, "the response broke off")
	}
	return err
}
