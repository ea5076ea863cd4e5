package chat

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/webhook"
)

// ApprovalLinkHandler serves the webhook route (register it on
// webhook.Pattern in place of webhook.NewHandler) for the approval links
// of tools made with agent.ApprovalByLink, and hands every other webhook
// to webhook.NewHandler. For an approval link:
//
//	GET, HEAD  a page showing the call, with Deny and Approve buttons (and its input to edit); nothing is written
//	POST       a decision (the page's form, or an agent.Approval as JSON): checked, then recorded; a page saying so
//
// Mail scanners and link previews fetch a link before its reader does,
// so only a POST decides, and Deny is the form's default (first) button:
// a scanner that submits the form denies, never approves. The first decision recorded is the one the run
// takes, from the link or agent.Approve; a later POST finds the link
// gone. A link that is unknown, used or not yet decided but expired gets a
// page that says it no longer decides (404, or 410 for an expired one),
// the same for every token, so the route tells no one which links exist; a
// POST that does not decide (no valid decision, an edited input that is
// not JSON, a body over the limit) gets a 400 or 413 page and is not
// recorded. The pages are not cached, not framed by other sites, and send
// no Referer. A GET costs one read of the hook; a request to another
// webhook costs that read more than webhook.NewHandler alone.
func ApprovalLinkHandler(c *workflow.Client, opts ...HandlerOption) http.Handler {
	cfg := handlerConfig{maxBody: DefaultMaxBodyBytes}
	for _, o := range opts {
		o(&cfg)
	}
	return &linkHandler{c: c, maxBody: cfg.maxBody, other: webhook.NewHandler(c, webhook.WithMaxBody(cfg.maxBody))}
}

type linkHandler struct {
	c       *workflow.Client
	maxBody int64
	other   http.Handler
}

func (h *linkHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	if token == "" {
		token, _ = strings.CutPrefix(r.URL.Path, workflow.WebhookPath)
	}
	var info workflow.HookInfo
	err := workflow.ErrHookNotFound
	if token != "" && !strings.Contains(token, "/") && len(token) <= maxKeyLen {
		info, err = h.c.GetHook(r.Context(), token)
	}
	switch {
	case err != nil && !errors.Is(err, workflow.ErrHookNotFound):
		h.failed(w, r, token, "reading an approval link", err)
		return
	case err != nil || !info.Webhook || info.Retained:
		writePage(w, r, http.StatusNotFound, pageGone)
		return
	}
	link, ok := agent.ParseApprovalLink(info.Metadata)
	switch {
	case !ok:
		h.other.ServeHTTP(w, r)
	case !link.ExpiresAt.IsZero() && !h.c.Now().Before(link.ExpiresAt):
		writePage(w, r, http.StatusGone, pageExpired)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		writePage(w, r, http.StatusOK, confirmPage(link))
	case r.Method == http.MethodPost:
		h.decide(w, r, token)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writePage(w, r, http.StatusMethodNotAllowed, pageMethod)
	}
}

// failed answers a request the World could not serve: nothing was
// decided, and the reader may try again.
func (h *linkHandler) failed(w http.ResponseWriter, r *http.Request, token, doing string, err error) {
	slog.ErrorContext(r.Context(), "chat: "+doing+" failed", "err", strings.ReplaceAll(err.Error(), token, "[token]"))
	writePage(w, r, http.StatusServiceUnavailable, pageRetry)
}

// decide checks the POSTed decision and records it.
func (h *linkHandler) decide(w http.ResponseWriter, r *http.Request, token string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writePage(w, r, http.StatusRequestEntityTooLarge, pageTooLarge)
		return
	}
	req := workflow.WebhookRequest{Method: r.Method, URL: r.URL.RequestURI(), Header: http.Header{"Content-Type": r.Header.Values("Content-Type")}, Body: body}
	a, err := agent.ApprovalFromRequest(req)
	if err == nil {
		_, err = h.c.ResumeWebhook(r.Context(), token, req)
		if errors.Is(err, workflow.ErrHookNotFound) {
			writePage(w, r, http.StatusNotFound, pageGone)
			return
		}
		if err != nil {
			h.failed(w, r, token, "recording an approval", err) // or the run's log is full
			return
		}
		writePage(w, r, http.StatusOK, decidedPage(a))
		return
	}
	writePage(w, r, http.StatusBadRequest, badDecisionPage(err))
}
