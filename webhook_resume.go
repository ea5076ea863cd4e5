package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// ErrNotWebhook is ResumeWebhook's error for a hook that is not a
// webhook. Serve it as a 404, like an unknown token, so callers cannot
// probe for tokens.
var ErrNotWebhook = errors.New("workflow: not a webhook")

// ResumeWebhook delivers an HTTP request to the webhook with token and
// returns the response for its caller: 202 Accepted or the webhook's
// static response ([WithStaticResponse]) as soon as the request is
// recorded, or for a manual webhook ([WithManualResponse]) the response a
// step sends, whose Stream yields the rest of the body as the step writes
// it. It fails with [ErrHookNotFound] or [ErrNotWebhook], having written
// nothing, for a token that is not a live webhook, and with
// ErrHookResponseNotSent if the run ends without answering.
//
// Package webhook serves this over net/http. If the step sending a
// streamed body fails and is retried after part of it was read, the
// Stream yields [ErrReplyRestarted]: the part already sent cannot be taken
// back, so abort the HTTP response.
func (c *Client) ResumeWebhook(ctx context.Context, token string, req WebhookRequest) (WebhookResponse, error) {
	if len(token) > engine.GeneratedTokenLen {
		// Webhook tokens are generated: this one cannot exist. Refusing it
		// here spares the World a lookup (and a key it may not accept).
		return WebhookResponse{}, fmt.Errorf("%w: a token of %d bytes is no webhook's", ErrHookNotFound, len(token))
	}
	var meta webhookMeta
	message := func(h world.Hook) (json.RawMessage, error) {
		if h.Kind != kindWebhook {
			return nil, fmt.Errorf("%w: hook %q", ErrNotWebhook, token)
		}
		meta = webhookMeta{}
		if err := json.Unmarshal(h.Metadata, &meta); err != nil {
			return nil, err
		}
		recorded := req
		recorded.Header = recordedHeaders(req.Header, meta.Headers)
		return json.Marshal(recorded)
	}
	resumeID := newResumeID()
	if _, err := c.deliver(ctx, token, resumeID, message); err != nil {
		return WebhookResponse{}, err
	}
	switch {
	case meta.Manual:
		return awaitReply[WebhookResponse](ctx, c, token, resumeID, 0)
	case meta.Response != nil:
		return *meta.Response, nil
	default:
		return WebhookResponse{Status: http.StatusAccepted}, nil
	}
}
