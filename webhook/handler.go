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
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/lambdaworkflow/workflow"
)

// Pattern is the route to register the handler on in an http.ServeMux.
const Pattern = workflow.WebhookPath + "{token}"

// Handler serves webhook calls. Every method is accepted. A token that is
// not a live webhook (unknown, ended, a plain or responding hook, longer
// than a generated token) gets 404 with an empty body, so the route does
// not tell which tokens exist, and tokens never appear in its logs; a
// body over the client's limit (workflow.WithWebhookMaxBody) gets 413 and
// is not recorded.
type Handler struct {
	client *workflow.Client
	logger *slog.Logger
}

// NewHandler returns a Handler resuming webhooks through c.
func NewHandler(c *workflow.Client) *Handler {
	return &Handler{client: c, logger: slog.Default()}
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
	resp, err := h.client.ResumeWebhook(r.Context(), token, r)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, workflow.ErrHookNotFound), errors.Is(err, workflow.ErrNotWebhook):
		w.WriteHeader(http.StatusNotFound)
		return
	case errors.As(err, &tooLarge):
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	case err != nil && r.Context().Err() != nil:
		return // the caller has gone
	case err != nil:
		h.logger.Error("workflow: webhook call failed", "err", redact(err, token))
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if err := copyFlushing(w, resp.Body); err != nil && r.Context().Err() == nil {
		// Part of the body is out and the rest will not come (the step
		// was retried, or the run ended): cut the connection so the caller
		// sees a broken response, not a short one that looks complete.
		h.logger.Error("workflow: webhook response broke off", "err", redact(err, token))
		panic(http.ErrAbortHandler)
	}
}

// redact is err's message without the token: a token is the webhook's
// only credential, and logs are read by more people than hold it.
func redact(err error, token string) string {
	return strings.ReplaceAll(err.Error(), token, "[token]")
}

// copyFlushing copies the body chunk by chunk, flushing each to the
// caller when the ResponseWriter can flush.
func copyFlushing(w http.ResponseWriter, body io.Reader) error {
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the caller has gone; nothing to tell it
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
