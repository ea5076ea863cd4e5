package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/stream"
)

// Step is a defined step: an ordinary Go function whose result is recorded
// in the run's log. A step runs at least once; once its result is recorded
// it never runs again for that call. Steps do the I/O; make them
// idempotent, or give them an idempotency key (StepInfo's RunID and StepID
// are stable across retries).
type Step[I, O any] struct {
	def *engine.StepDef
}

// StepOption configures DefineStep.
type StepOption func(*stepConfig)

// stepConfig is a step's retry policy.
type stepConfig struct {
	maxRetries       int
	backoff          func(retry int) time.Duration
	timeout          time.Duration
	heartbeatTimeout time.Duration
}

// WithMaxRetries sets how many times a failed attempt is retried
// (default [DefaultMaxRetries]: four attempts in all). A [FatalError] is
// never retried.
func WithMaxRetries(n int) StepOption {
	return func(c *stepConfig) { c.maxRetries = max(n, 0) }
}

// WithBackoff sets the delay before retry n (1-based) when the error does
// not carry its own (see [Retryable]): [ExponentialBackoff] and
// [LinearBackoff] build one, with the [Jitter] you choose. The default is
// [DefaultBackoff].
func WithBackoff(backoff func(retry int) time.Duration) StepOption {
	return func(c *stepConfig) { c.backoff = backoff }
}

// WithTimeout bounds each attempt: its context is cancelled after d. It
// is also the step's declared duration: an invocation with a deadline (a
// Lambda invocation's) starts the attempt only if d fits in the time it
// has left, and otherwise hands the run to a fresh invocation first; a
// step whose d is longer than any invocation allows fails at once with
// [ErrStepTooLong] (see [WorkerOptions.MaxInvocation]).
func WithTimeout(d time.Duration) StepOption {
	return func(c *stepConfig) { c.timeout = d }
}

// DefaultMaxRetries is how many times a failed step is retried by default.
const DefaultMaxRetries = 3

// DefineStep registers a step under a name stored in the log.
func DefineStep[I, O any](name string, fn func(ctx context.Context, input I) (O, error), opts ...StepOption) *Step[I, O] {
	cfg := stepConfig{maxRetries: DefaultMaxRetries, backoff: DefaultBackoff}
	for _, o := range opts {
		o(&cfg)
	}
	def := &engine.StepDef{Name: name, Fn: wrapStep(name, fn), MaxRetries: cfg.maxRetries, Backoff: cfg.backoff,
		Timeout: cfg.timeout, HeartbeatTimeout: cfg.heartbeatTimeout}
	engine.Global.AddStep(def)
	return &Step[I, O]{def: def}
}

// Name returns the step's registered name.
func (s *Step[I, O]) Name() string { return s.def.Name }

// Call runs the step and waits for its result. The run is suspended (at no
// cost) if the step cannot finish in this invocation.
func (s *Step[I, O]) Call(ctx Context, input I) (O, error) {
	return s.start(ctx, input, callSite()).Get(ctx)
}

// Go starts the step and returns a Future for its result, so several steps
// can run in parallel: start them all, then Get each.
func (s *Step[I, O]) Go(ctx Context, input I) Future[O] {
	return s.start(ctx, input, callSite())
}

func (s *Step[I, O]) start(ctx Context, input I, site string) *opFuture[O] {
	raw, err := json.Marshal(input)
	if err != nil {
		return failedFuture[O](fmt.Errorf("workflow: step %q: encoding input: %w", s.def.Name, err))
	}
	op := ctx.engine().CallStep(s.def, raw, site)
	return &opFuture[O]{op: op, wrap: func(err error) error {
		return &StepError{Step: s.def.Name, Attempts: op.Attempts(), Err: err}
	}}
}

// StepInfo describes the step attempt running with a context.
type StepInfo struct {
	RunID   string
	StepID  string // stable across retries: usable as an idempotency key
	Name    string
	Attempt int // 1 on the first attempt
}

// GetStepInfo returns the step attempt a step's context belongs to; ok is
// false outside a step.
func GetStepInfo(ctx context.Context) (info StepInfo, ok bool) {
	i, ok := engine.StepInfoFrom(ctx)
	return StepInfo{RunID: i.RunID, StepID: i.StepID, Name: i.Name, Attempt: i.Attempt}, ok
}

// wrapStep erases a step's types: JSON in, JSON out. Values that cannot be
// decoded or encoded fail the step for good: retrying cannot fix them. It
// also waits, before the step's result is recorded or the step is retried,
// for everything the attempt wrote to the run's streams.
func wrapStep[I, O any](name string, fn func(context.Context, I) (O, error)) engine.StepFunc {
	return func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
		var in I
		if err := decodeJSON(raw, &in); err != nil {
			return nil, Fatal(fmt.Errorf("workflow: step %q: decoding input into %T: %w", name, in, err))
		}
		writers := stream.NewStepWriters()
		ctx = context.WithValue(ctx, stepWritersKey{}, writers)
		// A failed or panicking attempt's writes land too before the
		// engine retries it, so the next attempt's never overtake them.
		defer writers.Settle()
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		if err := writers.Flush(); err != nil {
			return nil, fmt.Errorf("workflow: step %q: writing to the run's streams: %w", name, err)
		}
		encoded, err := json.Marshal(out)
		if err != nil {
			return nil, Fatal(fmt.Errorf("workflow: step %q: encoding result: %w", name, err))
		}
		return encoded, nil
	}
}
