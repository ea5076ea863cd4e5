package workflow

import (
	"net/textproto"
	"time"
)

// HookOption configures CreateHook, CreateRespondingHook and the Create
// methods of HookDef and RespondingHookDef.
type HookOption interface{ applyHook(*hookConfig) }

// WebhookOption configures CreateWebhook.
type WebhookOption interface{ applyWebhook(*webhookConfig) }

// HookSetting is an option for every kind of hook: it is both a
// [HookOption] and a [WebhookOption].
type HookSetting func(*hookRecord)

func (s HookSetting) applyHook(c *hookConfig)       { s(&c.hookRecord) }
func (s HookSetting) applyWebhook(c *webhookConfig) { s(&c.hookRecord) }

// hookRecord is what every kind of hook stores with its token.
type hookRecord struct {
	metadata  any
	retention time.Duration
}

type hookConfig struct {
	hookRecord
	token string
	force bool
}

type webhookConfig struct {
	hookRecord
	manual   bool
	response *WebhookResponse
	headers  []string // nil: defaultRequestHeaders
}

type hookOptionFunc func(*hookConfig)

func (f hookOptionFunc) applyHook(c *hookConfig) { f(c) }

type webhookOptionFunc func(*webhookConfig)

func (f webhookOptionFunc) applyWebhook(c *webhookConfig) { f(c) }

// WithToken gives the hook the token that addresses it. Deterministic
// tokens ("approval:" + orderID) let the resumer find the hook without
// being told; without WithToken the token is generated and unguessable.
// A webhook's token is always generated: anyone who knows it can call it.
func WithToken(token string) HookOption {
	return hookOptionFunc(func(c *hookConfig) { c.token = token })
}

// WithForceClaim takes the token over from another run that holds it: that
// run's Receive fails with [ErrHookForceClaimed], and resumes already on
// their way to it are delivered to this run instead.
func WithForceClaim() HookOption {
	return hookOptionFunc(func(c *hookConfig) { c.force = true })
}

// WithMetadata stores v with the hook, readable by resumers
// ([Client.GetHook]). It must encode to JSON.
func WithMetadata(v any) HookSetting {
	return func(r *hookRecord) { r.metadata = v }
}

// WithMinRetention keeps the token unavailable to other runs for at least
// d after the hook is created, even after this run ends, so a duplicate
// request arriving late still collides.
func WithMinRetention(d time.Duration) HookSetting {
	return func(r *hookRecord) { r.retention = d }
}

// WithManualResponse keeps a webhook's HTTP caller waiting until a step
// answers with [WebhookMessage.RespondWith]; the response can stream.
func WithManualResponse() WebhookOption {
	return webhookOptionFunc(func(c *webhookConfig) { c.manual = true })
}

// WithStaticResponse makes a webhook that is not manual answer every
// caller with resp once the request is recorded (its Stream is not used).
// Without it the answer is 202 Accepted with an empty body.
func WithStaticResponse(resp WebhookResponse) WebhookOption {
	return webhookOptionFunc(func(c *webhookConfig) { c.response = &resp })
}

// WithRequestHeaders records only the named request headers (matched
// without regard to case) with each request the webhook receives, in
// [WebhookRequest.Header]; with no names, none. Without this option a
// webhook records only Accept, Content-Encoding, Content-Language,
// Content-Type, Date and User-Agent, so any other header (a signature, an
// event type, a sender's secret token) reaches the workflow only if named
// here, together with those of the defaults it reads. Requests are kept in
// the run's log as long as the run is, and read by whoever can read runs,
// so name only the headers the workflow uses (a signature to verify, a
// Content-Type to decode by).
func WithRequestHeaders(names ...string) WebhookOption {
	canonical := make([]string, len(names))
	for i, n := range names {
		canonical[i] = textproto.CanonicalMIMEHeaderKey(n)
	}
	return webhookOptionFunc(func(c *webhookConfig) { c.headers = canonical })
}

func newHookConfig(opts []HookOption) hookConfig {
	var c hookConfig
	for _, o := range opts {
		o.applyHook(&c)
	}
	return c
}

func newWebhookConfig(opts []WebhookOption) webhookConfig {
	var c webhookConfig
	for _, o := range opts {
		o.applyWebhook(&c)
	}
	return c
}
