package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// ErrNotWebhook is returned by ResumeWebhook for a hook that is not a
// webhook. Serve it as a 404, like an unknown token, so callers cannot
// probe for tokens.
var ErrNotWebhook = errors.New("workflow: not a webhook")

// DefaultWebhookMaxBody is the largest request body a webhook takes unless
// the client says otherwise (WithWebhookMaxBody).
const DefaultWebhookMaxBody = 1 << 20

// WithWebhookMaxBody sets the largest request body ResumeWebhook reads;
// a larger one fails with an *http.MaxBytesError and is not recorded.
func WithWebhookMaxBody(n int64) ClientOption { return func(c *Client) { c.webhookMaxBody = n } }

// ResumeWebhook delivers an HTTP request to the webhook with token and
// returns the response for its caller: 202 Accepted or the webhook's
// static Response as soon as the request is recorded, or for a Manual
// webhook the response a step sends, whose body streams as the step
// writes it (read Body to the end, or close it). It fails with
// ErrHookNotFound or ErrNotWebhook, having written nothing, for a token
// that is not a live webhook, and with ErrHookResponseNotSent if the run
// ends without answering.
//
// If the step sending a streamed body fails and is retried after part of
// it was read, reading the body fails with ErrReplyRestarted: the part
// already sent cannot be taken back, so abort the HTTP response.
func (c *Client) ResumeWebhook(ctx context.Context, token string, r *http.Request) (*http.Response, error) {
	if len(token) > engine.GeneratedTokenLen {
		// Webhook tokens are generated: this one cannot exist. Refusing it
		// here spares the World a lookup (and a key it may not accept).
		return nil, fmt.Errorf("%w: a token of %d bytes is no webhook's", ErrHookNotFound, len(token))
	}
	req, err := c.webhookRequest(r)
	if err != nil {
		return nil, err
	}
	var meta webhookMeta
	vet := func(h world.Hook) error {
		if h.Kind != kindWebhook {
			return fmt.Errorf("%w: hook %q", ErrNotWebhook, token)
		}
		return json.Unmarshal(h.Metadata, &meta)
	}
	resumeID := newResumeID()
	if _, err := c.deliver(ctx, token, resumeID, mustJSON(req), vet); err != nil {
		return nil, err
	}
	switch {
	case meta.Manual:
		resp, err := awaitReply[WebhookResponse](ctx, c.world, token, resumeID, 0)
		if err != nil {
			return nil, err
		}
		return resp.httpResponse(ctx), nil
	case meta.Response != nil:
		return meta.Response.httpResponse(ctx), nil
	default:
		return WebhookResponse{Status: http.StatusAccepted}.httpResponse(ctx), nil
	}
}

// webhookRequest reads r into what the workflow receives.
func (c *Client) webhookRequest(r *http.Request) (WebhookRequest, error) {
	req := WebhookRequest{Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone()}
	if r.Body == nil {
		return req, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, cmp.Or(c.webhookMaxBody, DefaultWebhookMaxBody)))
	if err != nil {
		return req, fmt.Errorf("reading the webhook request: %w", err)
	}
	req.Body = body
	return req, nil
}

// httpResponse turns the reply into an *http.Response whose body is Body
// followed by the Stream's chunks as they arrive.
func (r WebhookResponse) httpResponse(ctx context.Context) *http.Response {
	status := cmp.Or(r.Status, http.StatusOK)
	header := r.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	next, stop := iter.Pull2(r.Stream.All(ctx))
	body := &streamBody{head: r.Body, next: next, stop: stop}
	return &http.Response{Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: header, Body: body, ContentLength: -1}
}

// streamBody reads a response body that arrives in chunks. Each Read
// returns data from one chunk at most, so a server copying it can flush
// the client chunk by chunk.
type streamBody struct {
	head []byte // what is left of the current chunk
	next func() ([]byte, error, bool)
	stop func()
}

func (b *streamBody) Read(p []byte) (int, error) {
	for len(b.head) == 0 {
		chunk, err, ok := b.next()
		switch {
		case !ok:
			return 0, io.EOF
		case err != nil:
			return 0, err
		}
		b.head = chunk
	}
	n := copy(p, b.head)
	b.head = b.head[n:]
	return n, nil
}

func (b *streamBody) Close() error {
	b.stop()
	return nil
}
