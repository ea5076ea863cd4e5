package aws

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/lambdaworkflow/workflow/world"
)

// A stream's writer tells its readers of new chunks through an AppSync
// Events API (https://docs.aws.amazon.com/appsync/latest/eventapi/): after
// each committed append it publishes the stream's new next index to the
// stream's channel, and readers subscribed over the API's WebSocket
// (streamsubscribe.go) read at once instead of at their next poll. The
// announcement carries no chunk: chunks may be sealed, and the table stays
// the only source of truth, so a lost or late announcement costs only the
// wait for the poll.

// EventAPI names the AppSync Events API that carries stream writes to
// readers. The zero EventAPI carries nothing: readers only poll.
type EventAPI struct {
	// HTTPDomain and RealtimeDomain are the API's DNS names, as its Dns
	// attribute gives them: "{id}.appsync-api.{region}.amazonaws.com" and
	// "{id}.appsync-realtime-api.{region}.amazonaws.com" (EventAPIByID). With
	// an endpoint override in the World's config (an emulator), requests go
	// there with these as their Host.
	HTTPDomain     string
	RealtimeDomain string
	// Namespace is the channel namespace the streams' channels are in.
	Namespace string
}

// DefaultEventNamespace is template.yaml's default StreamEventsNamespace.
const DefaultEventNamespace = "streams"

// EventAPIByID returns the EventAPI of the API apiID in region under its
// default DNS names, in namespace (empty: DefaultEventNamespace).
func EventAPIByID(apiID, region, namespace string) EventAPI {
	if namespace == "" {
		namespace = DefaultEventNamespace
	}
	return EventAPI{
		HTTPDomain:     apiID + ".appsync-api." + region + ".amazonaws.com",
		RealtimeDomain: apiID + ".appsync-realtime-api." + region + ".amazonaws.com",
		Namespace:      namespace,
	}
}

func (e EventAPI) enabled() bool { return e.HTTPDomain != "" }

func (e EventAPI) validate() error {
	if e == (EventAPI{}) {
		return nil
	}
	if e.HTTPDomain == "" || e.RealtimeDomain == "" || !channelSegment(e.Namespace) {
		return fmt.Errorf("aws world: stream events need both domains and a namespace of 1 to 50 letters, digits and dashes, got %+v", e)
	}
	return nil
}

// eventsFromEnv reads WORKFLOW_STREAM_EVENTS_API_ID (unset: no push) and
// WORKFLOW_STREAM_EVENTS_NAMESPACE in AWS_REGION.
func eventsFromEnv() (EventAPI, error) {
	id := os.Getenv("WORKFLOW_STREAM_EVENTS_API_ID")
	if id == "" {
		return EventAPI{}, nil
	}
	region := os.Getenv("AWS_REGION")
	if region == "" {
		return EventAPI{}, fmt.Errorf("WORKFLOW_STREAM_EVENTS_API_ID is set but AWS_REGION is not")
	}
	return EventAPIByID(id, region, os.Getenv("WORKFLOW_STREAM_EVENTS_NAMESPACE")), nil
}

// channelSegment reports whether s is a valid channel path segment: 1 to
// 50 letters, digits and dashes, with no dash at either end.
func channelSegment(s string) bool {
	const allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
	return len(s) > 0 && len(s) <= 50 && s[0] != '-' && s[len(s)-1] != '-' && strings.Trim(s, allowed) == ""
}

// streamEvents publishes and signs a World's requests to its Event API.
type streamEvents struct {
	api    EventAPI
	table  string
	cfg    aws.Config
	client aws.HTTPClient
	signer *v4.Signer
	calls  *callCounter
	// endpoint is the config's endpoint override (an emulator), which
	// requests are sent to instead of the API's domains; nil: none.
	endpoint *url.URL
	subs     *subscriptions
}

func newStreamEvents(cfg aws.Config, opts Options, calls *callCounter) (*streamEvents, error) {
	client := cfg.HTTPClient
	if client == nil {
		client = awshttp.NewBuildableClient()
	}
	e := &streamEvents{api: opts.StreamEvents, table: opts.Table, cfg: cfg, client: client, signer: v4.NewSigner(), calls: calls}
	if cfg.BaseEndpoint != nil {
		u, err := url.Parse(*cfg.BaseEndpoint)
		if err != nil {
			return nil, fmt.Errorf("aws world: endpoint %q: %w", *cfg.BaseEndpoint, err)
		}
		e.endpoint = u
	}
	e.subs = newSubscriptions(e)
	return e, nil
}

// channel is the stream's channel: the names of a table's streams hashed
// into one segment (names may hold any character and be of any length),
// so that Worlds on other tables sharing the API do not wake each other.
func (e *streamEvents) channel(stream string) string {
	sum := sha256.Sum256([]byte(e.table + "\x00" + stream))
	return "/" + e.api.Namespace + "/" + hex.EncodeToString(sum[:16])
}

// announcement is what a write publishes: where the stream's end is now,
// and whether it is closed.
type announcement struct {
	Next   int64 `json:"next"`
	Closed bool  `json:"closed,omitempty"`
}

// publishTimeout bounds a publish, which only saves readers their poll.
const publishTimeout = 2 * time.Second

// publish announces a run stream's new end (only Run.Readable
// subscribes, so a reply stream's writes announce nothing). A failure is only
// counted and logged: the write is committed, and readers find it at
// their next poll.
func (e *streamEvents) publish(ctx context.Context, stream string, a announcement) {
	if !world.IsRunStream(stream) {
		return // a reply's reader polls its cursor; nobody subscribes to it
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := e.post(ctx, stream, a); err != nil {
		e.calls.add(callPublishFailed)
		slog.DebugContext(ctx, "workflow: publishing a stream write failed; readers poll", "stream", stream, "err", err)
	}
}

// Keys of the Event API's requests in Calls.
const (
	callPublish       = "AppSync.EventPublish"
	callPublishFailed = "AppSync.EventPublishFailed"
	callConnect       = "AppSync.EventConnect"
	callSubscribe     = "AppSync.EventSubscribe"
)

func (e *streamEvents) post(ctx context.Context, stream string, a announcement) error {
	event, err := json.Marshal(a)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"channel": e.channel(stream), "events": []string{string(event)}})
	if err != nil {
		return err
	}
	req, err := e.signed(ctx, body)
	if err != nil {
		return err
	}
	e.calls.add(callPublish)
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("publish: %s: %s", resp.Status, answer)
	}
	var result struct {
		Failed []json.RawMessage `json:"failed"`
	}
	if err := json.Unmarshal(answer, &result); err != nil || len(result.Failed) > 0 {
		return fmt.Errorf("publish refused: %s", answer)
	}
	return nil
}

// signed returns a POST of body to the API's /event endpoint, signed
// with the World's credentials: a publish, and (unsent) the request whose
// signature authorizes a WebSocket connection or subscription.
func (e *streamEvents) signed(ctx context.Context, body []byte) (*http.Request, error) {
	target := "https://" + e.api.HTTPDomain + "/event"
	if e.endpoint != nil {
		target = e.endpoint.JoinPath("event").String()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Host = e.api.HTTPDomain
	req.Header.Set("Accept", "application/json, text/javascript")
	req.Header.Set("Content-Encoding", "amz-1.0")
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	creds, err := e.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := e.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "appsync", e.cfg.Region, time.Now()); err != nil {
		return nil, err
	}
	return req, nil
}

// authorization returns the headers of a signed request for body, as the
// WebSocket protocol carries them: in the connection's header
// subprotocol ("{}") and in each subscribe message.
func (e *streamEvents) authorization(ctx context.Context, body []byte) (map[string]string, error) {
	req, err := e.signed(ctx, body)
	if err != nil {
		return nil, err
	}
	auth := map[string]string{"host": e.api.HTTPDomain}
	for k, v := range req.Header {
		auth[strings.ToLower(k)] = strings.Join(v, ",")
	}
	auth["Authorization"] = req.Header.Get("Authorization")
	delete(auth, "authorization")
	return auth, nil
}
