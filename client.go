package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Client starts and inspects runs, and resumes hooks, from ordinary Go
// code: an HTTP handler, a CLI, a test. It is safe for concurrent use.
type Client struct {
	world     world.World
	now       func() time.Time
	maxEvents int
	codec     *codec.Chain
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithClock replaces the wall clock (the test harness skips time with it).
func WithClock(now func() time.Time) ClientOption { return func(c *Client) { c.now = now } }

// WithMaxEvents is the event limit of the runs this client resumes: a
// resume of a run whose log holds n events fails with
// ErrMaxEventsExceeded (the webhook route answers 429). Give it the
// workers' WorkerOptions.MaxEvents; the default is theirs, 25,000.
func WithMaxEvents(n int) ClientOption { return func(c *Client) { c.maxEvents = n } }

// WithPayloadCodec encodes what the client stores for runs (the input of
// the runs it starts, the payloads of its resumes) and decodes what it
// reads (results, streams): give it the workers' WorkerOptions.Codec. The
// runs it starts are created with the chain's scheme; a run keeps its
// scheme whatever the client or its workers configure later.
func WithPayloadCodec(c *codec.Chain) ClientOption {
	return func(cl *Client) { cl.codec = c }
}

// NewClient returns a Client for the given World.
func NewClient(w world.World, opts ...ClientOption) *Client {
	c := &Client{world: w, now: time.Now, maxEvents: engine.DefaultMaxEvents}
	for _, o := range opts {
		o(c)
	}
	return c
}

// World returns the World the client talks to.
func (c *Client) World() world.World { return c.world }

// PayloadCodec returns the chain the client encodes new runs with
// (WithPayloadCodec), nil if none.
func (c *Client) PayloadCodec() *codec.Chain { return c.codec }

// Now returns the time on the client's clock (see WithClock), which
// stamps the runs it starts.
func (c *Client) Now() time.Time { return c.now() }

// StartOption configures a run's start: [Start], and
// [Workflow.StartChild] for a child run.
type StartOption func(*startConfig)

type startConfig struct {
	runID      string
	key        string
	attributes map[string]string
	limitKey   *string // WithLimitKey (limits.go)
}

// WithRunID gives the run a caller-chosen ID. Starting again with the same
// ID returns the existing run instead of starting a second one. A child's
// ID is by default derived from its parent's ID and the call's position,
// so the child is found again, not started twice, when the parent
// replays.
func WithRunID(id string) StartOption { return func(s *startConfig) { s.runID = id } }

// WithIdempotencyKey derives the run's ID from the workflow name and key,
// so a retried Start (a redelivered request, a double click) returns the
// run the first one started; for a child, the one an earlier StartChild
// with that key started, from whichever parent.
func WithIdempotencyKey(key string) StartOption { return func(s *startConfig) { s.key = key } }

// WithAttributes seeds the run's attributes, searchable with ListRuns.
// Keys starting with '$' are reserved. It applies to Start only: a child
// carries the attributes its parent gives it ($parentRunId, $rootRunId),
// and StartChild with WithAttributes fails.
func WithAttributes(attrs map[string]string) StartOption {
	return func(s *startConfig) { s.attributes = attrs }
}

// Start starts a run of wf and returns its handle without waiting for it.
func Start[I, O any](ctx context.Context, c *Client, wf *Workflow[I, O], input I, opts ...StartOption) (*Run[O], error) {
	if wf == nil || wf.name == "" {
		// No worker could ever run it: refuse rather than store a stuck run.
		return nil, errors.New("workflow: Start: the workflow has no name; make it with Define")
	}
	var cfg startConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := engine.CheckAttributes(cfg.attributes); err != nil {
		return nil, err
	}
	raw, err := marshal("workflow input", input)
	if err != nil {
		return nil, err
	}
	limit, err := startLimit(wf.def, cfg)
	if err != nil {
		return nil, err
	}
	id := engine.NewRunID(wf.name, cfg.runID, cfg.key)
	nr := engine.NewRun{ID: id, Workflow: wf.name, Input: raw, Attributes: cfg.attributes, Limit: limit, Codec: c.codec}
	if err := engine.StartOrJoin(ctx, c.world, nr, c.now()); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return &Run[O]{ID: id, c: c}, nil
}

// GetRun returns a handle on an existing run whose result is an O.
func GetRun[O any](ctx context.Context, c *Client, runID string) (*Run[O], error) {
	if _, err := c.world.GetRun(ctx, runID); err != nil {
		return nil, err
	}
	return RunOf[O](c, runID), nil
}

// RunOf returns a handle on the run with the given ID, whose result is an
// O, without reading it: for a caller that has just started or read the
// run itself. A wrong ID shows in the handle's calls, as ErrRunNotFound.
func RunOf[O any](c *Client, runID string) *Run[O] { return &Run[O]{ID: runID, c: c} }
