package workflow

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/stream"
)

// WebhookPath is the route under which webhooks are served: a webhook's
// URL is its base URL, this path, and its token. The webhook package
// serves it.
const WebhookPath = "/.well-known/workflow/v1/webhook/"

// WebhookURL returns the URL of the webhook with token, served under
// baseURL (e.g. "https://example.com").
func WebhookURL(baseURL, token string) string {
	return strings.TrimSuffix(baseURL, "/") + WebhookPath + url.PathEscape(token)
}

// webhookMeta is what a webhook stores as its hook metadata: how to answer
// callers, which the HTTP side needs before it resumes, and the user's own
// metadata.
type webhookMeta struct {
	Manual   bool             `json:"manual,omitempty"`
	Response *WebhookResponse `json:"response,omitempty"`
	User     json.RawMessage  `json:"metadata,omitempty"`
	// Headers are the request headers to record ([WithRequestHeaders]);
	// nil (absent) means the defaults (defaultRequestHeaders), and [] none.
	Headers []string `json:"headers,omitzero"`
}

// WebhookRequest is an HTTP request received by a webhook.
type WebhookRequest struct {
	Method string
	// URL is the request's path and query, as the caller sent them.
	URL string
	// Header holds the request headers the webhook records: those
	// [WithRequestHeaders] names, or without it only a few standard ones
	// that carry no secret (Content-Type, User-Agent and the like; see
	// WithRequestHeaders).
	Header http.Header
	Body   []byte
}

// WebhookResponse is the HTTP response a webhook sends.
type WebhookResponse struct {
	Status int // 0 means 200
	Header http.Header
	Body   []byte
	// Stream, if made with NewStream, sends more of the body after Body,
	// chunk by chunk as the step produces it: the caller receives each
	// chunk as it is written (server-sent events, NDJSON, raw bytes: set
	// Content-Type accordingly). Only a manual webhook's reply streams.
	Stream Stream[[]byte] `json:"-"`
}

func (r WebhookResponse) replyHead() (json.RawMessage, error) { return json.Marshal(r) }

func (r WebhookResponse) replyItems() stream.Items {
	if r.Stream.produce == nil {
		return nil
	}
	return r.Stream.replyItems()
}

func (r *WebhookResponse) attachItems(src *stream.ReplyReader) { r.Stream.attachItems(src) }

// Webhook is a responding hook reachable over HTTP, at a URL anyone who
// knows it can call: a RespondingHook whose messages are HTTP requests and
// whose replies are HTTP responses.
type Webhook struct {
	*RespondingHook[WebhookRequest, WebhookResponse]
}

// CreateWebhook creates a webhook in the calling workflow. Serve the
// webhook route with the webhook package's Handler (or call
// Client.ResumeWebhook from your own).
func CreateWebhook(ctx Context, opts ...WebhookOption) *Webhook {
	c := newWebhookConfig(opts)
	meta := encodeMetadata(webhookMeta{Manual: c.manual, Response: c.response, User: encodeMetadata(c.metadata), Headers: c.headers})
	o := engine.HookOptions{Kind: kindWebhook, Metadata: meta, Retention: c.retention, Replies: c.manual}
	return &Webhook{newRespondingHook[WebhookRequest, WebhookResponse](ctx, o, callSite())}
}

// URL returns the webhook's URL, on the base URL the worker was given
// (WorkerOptions.WebhookBaseURL; without one, the URL is a path).
func (w *Webhook) URL(ctx Context) string {
	return WebhookURL(ctx.engine().WebhookBaseURL(), w.Token(ctx))
}

// Receive waits for the next request.
func (w *Webhook) Receive(ctx Context) (WebhookMessage, error) {
	m, err := w.RespondingHook.Receive(ctx)
	return WebhookMessage{m}, err
}

// All iterates over the requests as they arrive (see Hook.All).
func (w *Webhook) All(ctx Context) iter.Seq2[WebhookMessage, error] {
	return func(yield func(WebhookMessage, error) bool) {
		for m, err := range w.RespondingHook.All(ctx) {
			if !yield(WebhookMessage{m}, err) {
				return
			}
		}
	}
}

// WebhookMessage is one request to a webhook; Data is the request.
type WebhookMessage struct {
	HookMessage[WebhookRequest, WebhookResponse]
}

// RespondWith sends the HTTP response to the caller of a manual webhook,
// from a step (see HookMessage.Respond).
func (m WebhookMessage) RespondWith(ctx context.Context, resp WebhookResponse) error {
	return m.Respond(ctx, resp)
}
