package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// ApprovalExpiredCode is the denial code of a call whose approval link
// expired before anyone decided.
const ApprovalExpiredCode = "APPROVAL_EXPIRED"

// ApprovalLinkKind marks the metadata of an approval link's webhook, so
// that a handler on the webhook route can tell it from other webhooks.
const ApprovalLinkKind = "agent.approval-link"

// SendApprovalLink hands the URL of a call's approval link to whoever
// decides, say by e-mail. It runs as a step: retried until it succeeds,
// and not run again once it has, so the mail goes out once.
type SendApprovalLink func(ctx context.Context, call ToolCall, url string) error

// ApprovalByLink makes every call of the tool wait for approval
// ([NeedsApproval]) and also gives the call a link that decides it: a
// webhook (see [workflow.CreateWebhook]) whose generated token is the
// link's only credential, its URL on the worker's WebhookBaseURL handed to
// send. Whichever answers first, the link or [Approve], decides; a call
// still undecided after expiresAfter (0: never) is denied with
// [ApprovalExpiredCode]. If send fails for good (after its step's
// retries), the call is a fault the model is told of.
//
// Opening the link must not decide: mail scanners and previews fetch it.
// Only a POST of a decision ([ApprovalFromRequest]) counts; the run
// ignores every other request. Serve the links with the agent/chat
// package's ApprovalLinkHandler, which answers a GET with a page asking to
// confirm without writing anything, checks a POST before it is recorded,
// and answers a used, expired or unknown link with a page that says so.
func ApprovalByLink(send SendApprovalLink, expiresAfter time.Duration) ToolOption {
	return func(c *toolConfig) {
		c.approval = true
		c.link = &approvalLink{send: send, expiresAfter: expiresAfter}
	}
}

// approvalLink is a tool's approval-by-link configuration; its step is
// defined with the tool.
type approvalLink struct {
	send         SendApprovalLink
	expiresAfter time.Duration
	step         *workflow.Step[linkInput, struct{}]
}

type linkInput struct {
	Call ToolCall `json:"call"`
	URL  string   `json:"url"`
}

func (l *approvalLink) define(tool string) {
	l.step = workflow.DefineStep("agent.approval.link."+tool, func(ctx context.Context, in linkInput) (struct{}, error) {
		return struct{}{}, l.send(ctx, in.Call, in.URL)
	})
}

// ApprovalLinkRequest is the metadata of an approval link's webhook: what
// its confirmation page shows.
type ApprovalLinkRequest struct {
	Kind       string          `json:"kind"` // ApprovalLinkKind
	ToolCallID string          `json:"toolCallId"`
	Tool       string          `json:"tool"`
	Input      json.RawMessage `json:"input"`
	// ExpiresAt is when the link stops deciding; zero if never.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// ParseApprovalLink reads a webhook's metadata as an approval link's; ok
// is false for any other webhook.
func ParseApprovalLink(metadata json.RawMessage) (r ApprovalLinkRequest, ok bool) {
	if json.Unmarshal(metadata, &r) != nil || r.Kind != ApprovalLinkKind {
		return ApprovalLinkRequest{}, false
	}
	return r, true
}

// The form fields of a decision sent to an approval link.
const (
	FormDecision = "decision" // "approve" or "deny"
	FormComment  = "comment"
	FormInput    = "input" // the edited input, JSON; empty or unchanged keeps the call's
)

// ApprovalFromRequest reads the decision a request to an approval link
// carries: a POST of an HTML form (application/x-www-form-urlencoded,
// fields [FormDecision], [FormComment], [FormInput]) or of an [Approval]
// as JSON. Any other request, a form without a valid decision, or an
// edited input that is not JSON is an error: it decides nothing.
func ApprovalFromRequest(req workflow.WebhookRequest) (Approval, error) {
	if req.Method != http.MethodPost {
		return Approval{}, fmt.Errorf("a %s request decides nothing: send the decision as a POST", req.Method)
	}
	media, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	var a Approval
	switch media {
	case "application/json":
		if err := json.Unmarshal(req.Body, &a); err != nil {
			return Approval{}, fmt.Errorf("the decision is not an approval: %w", err)
		}
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(req.Body))
		if err != nil {
			return Approval{}, fmt.Errorf("the form does not decode: %w", err)
		}
		switch form.Get(FormDecision) {
		case "approve":
			a.Approved = true
		case "deny":
		default:
			return Approval{}, fmt.Errorf("the form's %s is %q, neither approve nor deny", FormDecision, form.Get(FormDecision))
		}
		a.Comment = strings.TrimSpace(form.Get(FormComment))
		if in := strings.TrimSpace(form.Get(FormInput)); in != "" {
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(in)); err != nil {
				return Approval{}, errors.New("the edited input is not JSON")
			}
			a.Input = compact.Bytes()
		}
	default:
		return Approval{}, fmt.Errorf("a decision is a form or JSON, not %q", req.Header.Get("Content-Type"))
	}
	if len(a.Input) > 0 && !json.Valid(a.Input) {
		return Approval{}, errors.New("the edited input is not JSON")
	}
	return a, nil
}

// await waits for the first decision on call from its approval
// hook or its link, or for the link to expire.
func (l *approvalLink) await(ctx workflow.Context, call ToolCall, hook *workflow.Hook[Approval]) (Approval, *ToolResult) {
	req := ApprovalLinkRequest{Kind: ApprovalLinkKind, ToolCallID: call.ID, Tool: call.Name, Input: call.Input}
	var expired workflow.Future[struct{}]
	if l.expiresAfter > 0 {
		req.ExpiresAt = workflow.Now(ctx).Add(l.expiresAfter)
		expired = workflow.After(ctx, l.expiresAfter)
	}
	// Only Content-Type is kept: the run needs it to decode the decision,
	// and nothing else of a browser's request belongs in its log.
	link := workflow.CreateWebhook(ctx, workflow.WithMetadata(req), workflow.WithRequestHeaders("Content-Type"))
	defer link.Dispose(ctx)
	fault := func(err error) *ToolResult {
		return &ToolResult{CallID: call.ID, Name: call.Name, Outcome: Fault, Error: "waiting for approval: " + err.Error()}
	}
	if _, err := l.step.Call(ctx, linkInput{Call: call, URL: link.URL(ctx)}); err != nil {
		return Approval{}, fault(fmt.Errorf("sending the approval link: %w", err))
	}
	waits := []workflow.Awaitable{hook, link}
	if expired != nil {
		waits = append(waits, expired)
	}
	for {
		switch workflow.Select(ctx, waits...) {
		case 0:
			a, err := hook.Receive(ctx)
			if err != nil {
				return a, fault(err)
			}
			return a, nil
		case 1:
			m, err := link.Receive(ctx)
			if err != nil {
				return Approval{}, fault(err)
			}
			if a, err := ApprovalFromRequest(m.Data); err == nil {
				return a, nil
			}
			// A GET by a mail scanner, a form that does not decode: the
			// call still waits.
		default:
			return Approval{}, &ToolResult{CallID: call.ID, Name: call.Name, Outcome: Denied, Code: ApprovalExpiredCode, Error: "no one decided before the approval link expired"}
		}
	}
}
