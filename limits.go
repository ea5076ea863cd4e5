package workflow

import (
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// WithConcurrency lets at most n runs of the workflow run at once per
// limit key ([WithLimitKey] at [Start]; runs started without one share
// the empty key, so without keys n bounds the whole workflow). A run holds
// its slot from its start until it ends, however it ends; one that ends
// with [ContinueAsNew] passes it to its successor. A start beyond the
// limit is stored as [StatusQueued] at the back of its key's queue and
// costs nothing while it waits: the end of a run lets the oldest queued
// run of its key in. The World must implement world.Limiter (the memory,
// embedded and AWS Worlds do); Start fails on one that does not.
func WithConcurrency(n int) DefineOption {
	if n <= 0 {
		panic(fmt.Sprintf("workflow: WithConcurrency(%d): the limit must be at least 1", n))
	}
	return func(o *defineOptions) { o.limits().Concurrency = n }
}

// WithRateLimit lets at most n runs of the workflow start per period per
// limit key, counted in windows of period from the Unix epoch (so two
// adjacent windows can hold 2n starts within one period's length). A
// start beyond its window's n is delivered at the start of the first
// window with room: it waits on the queue's delay, not by polling.
func WithRateLimit(n int, period time.Duration) DefineOption {
	if n <= 0 || period <= 0 {
		panic(fmt.Sprintf("workflow: WithRateLimit(%d, %v): both the count and the period must be positive", n, period))
	}
	return func(o *defineOptions) { o.limits().Rate, o.limits().Period = n, period }
}

func (o *defineOptions) limits() *engine.Limits {
	if o.limit == nil {
		o.limit = &engine.Limits{}
	}
	return o.limit
}

// WithLimitKey names the partition the run counts in under its
// workflow's [WithConcurrency] and [WithRateLimit] limits, a customer's ID
// say: the limits hold per key. Start and StartChild refuse it for a
// workflow without limits.
func WithLimitKey(key string) StartOption { return func(s *startConfig) { s.limitKey = &key } }

// startLimit is the limit a run of def starts under, if any.
func startLimit(def *engine.WorkflowDef, cfg startConfig) (*world.Limit, error) {
	if def.Limits == nil {
		if cfg.limitKey != nil {
			return nil, fmt.Errorf("workflow: Start: WithLimitKey(%q) for workflow %q, which has no limits (WithConcurrency, WithRateLimit)", *cfg.limitKey, def.Name)
		}
		return nil, nil
	}
	var key string
	if cfg.limitKey != nil {
		key = *cfg.limitKey
	}
	return def.Limits.Limit(def.Name, key), nil
}
