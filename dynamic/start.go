package dynamic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Step is a registered step a source may call: a [*workflow.Step] made
// with [workflow.DefineStep].
type Step interface{ Name() string }

// Steps maps the aliases a source calls (steps.alias(...)) to registered
// steps. Values cross into and out of a step as JSON, decoded into the
// step's input type and encoded from its output.
type Steps map[string]Step

// Defaults of the limits a run is started with (see the With options).
const (
	DefaultMaxSourceBytes    = 128 << 10
	DefaultMaxSteps          = 1000
	DefaultMaxExecutionSteps = 10_000_000
)

// ErrDisabled is returned by Start in a process that has not turned
// dynamic workflows on; a run that reaches such a worker fails with it.
var ErrDisabled = errors.New("dynamic workflows are off: set " + engine.DynamicEnv + "=1 (or WorkerOptions.DynamicWorkflows on the workers and dynamic.WithEnabled on the starters)")

// ErrUnsealed fails a dynamic run whose stored code is not encrypted when
// it reaches a worker whose payload codec encrypts: whoever can write the
// World's storage could have written that code.
var ErrUnsealed = errors.New("dynamic workflow refused: this worker encrypts runs (WorkerOptions.Codec) and the run's stored source is not encrypted, so it may have been written past the codec; start it with a client that has the workers' codec (workflow.WithPayloadCodec)")

// StartOption configures Start.
type StartOption func(*startConfig)

type startConfig struct {
	enabled        bool
	runID, key     string
	attributes     map[string]string
	maxSourceBytes int
	source         dynsource.Source
}

// WithEnabled turns dynamic starts on for this call when the process's
// environment does not (WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS): give it
// the workers' WorkerOptions.DynamicWorkflows.
func WithEnabled(on bool) StartOption { return func(c *startConfig) { c.enabled = on } }

// WithRunID gives the run a caller-chosen ID; a second Start with it
// returns the existing run.
func WithRunID(id string) StartOption { return func(c *startConfig) { c.runID = id } }

// WithIdempotencyKey derives the run's ID from the definition and key, so
// a retried Start returns the run the first one started.
func WithIdempotencyKey(key string) StartOption { return func(c *startConfig) { c.key = key } }

// WithAttributes seeds the run's attributes. Keys starting with '$' are
// reserved.
func WithAttributes(attrs map[string]string) StartOption {
	return func(c *startConfig) { c.attributes = attrs }
}

// WithMaxSourceBytes bounds the source's size (default
// [DefaultMaxSourceBytes]).
func WithMaxSourceBytes(n int) StartOption { return func(c *startConfig) { c.maxSourceBytes = n } }

// WithMaxSteps bounds how many step calls the run may make (default
// [DefaultMaxSteps]); the call past it fails the run. The bound is stored
// with the run, so replays keep it.
func WithMaxSteps(n int) StartOption { return func(c *startConfig) { c.source.MaxSteps = n } }

// WithMaxExecutionSteps bounds the Starlark computation between two
// durable calls, in the interpreter's steps (default
// [DefaultMaxExecutionSteps], a fraction of a second): a loop that makes
// no durable call fails the run instead of holding its worker. Stored with
// the run.
func WithMaxExecutionSteps(n uint64) StartOption {
	return func(c *startConfig) { c.source.MaxExecutionSteps = n }
}

// Start starts a run of the workflow that code defines, over the given
// steps, and returns its handle without waiting for it. code is Starlark
// and must define workflow(input); input reaches it as JSON.
//
// A start the current deployment could not run is refused before anything
// is written: dynamic workflows off, source too large, a syntax error or
// an unknown name (each naming its line), an alias bound to no registered
// step, a steps.alias the map lacks. The source, its hash and the step map
// are stored in the run's input, so every replay runs this code whatever
// the deployment holds by then; the client's payload codec
// (workflow.WithPayloadCodec) seals them with the rest of the input.
func Start[O any](ctx context.Context, c *workflow.Client, code string, steps Steps, input any, opts ...StartOption) (*workflow.Run[O], error) {
	cfg := startConfig{maxSourceBytes: DefaultMaxSourceBytes, source: dynsource.Source{
		MaxSteps: DefaultMaxSteps, MaxExecutionSteps: DefaultMaxExecutionSteps,
	}}
	for _, o := range opts {
		o(&cfg)
	}
	name, raw, err := cfg.newRun(code, steps, input)
	if err != nil {
		return nil, fmt.Errorf("dynamic: Start: %w", err)
	}
	id := engine.NewRunID(name, cfg.runID, cfg.key)
	nr := engine.NewRun{ID: id, Workflow: name, Input: raw, Attributes: cfg.attributes, Codec: c.PayloadCodec()}
	if err := engine.StartOrJoin(ctx, c.World(), nr, c.Now()); err != nil {
		return nil, fmt.Errorf("dynamic: Start: %w", err)
	}
	return workflow.RunOf[O](c, id), nil
}

// newRun checks everything that could stop the run from ever running and
// returns its workflow name and input.
func (cfg *startConfig) newRun(code string, steps Steps, input any) (string, json.RawMessage, error) {
	if !cfg.enabled && !engine.DynamicFromEnv() {
		return "", nil, ErrDisabled
	}
	if len(code) > cfg.maxSourceBytes {
		return "", nil, fmt.Errorf("the source is %d bytes; the limit is %d (WithMaxSourceBytes)", len(code), cfg.maxSourceBytes)
	}
	if err := engine.CheckAttributes(cfg.attributes); err != nil {
		return "", nil, err
	}
	bound := map[string]string{}
	for _, alias := range slices.Sorted(maps.Keys(steps)) {
		if !isIdentifier(alias) {
			return "", nil, fmt.Errorf("step alias %q is not an identifier", alias)
		}
		name := steps[alias].Name()
		if _, ok := engine.Global.Step(name); !ok || strings.HasPrefix(name, internalStepPrefix) {
			return "", nil, fmt.Errorf("step alias %q: no step named %q is defined in this binary", alias, name)
		}
		bound[alias] = name
	}
	if _, err := compile(code, bound); err != nil {
		return "", nil, err
	}
	in, err := json.Marshal(input)
	if err != nil {
		return "", nil, fmt.Errorf("encoding the input: %w", err)
	}
	cfg.source.Code, cfg.source.Steps = code, bound
	name, raw := cfg.source.Store(in)
	return name, raw, nil
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}
