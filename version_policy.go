package workflow

import "github.com/lambdaworkflow/workflow/internal/engine"

// VersionPolicy says which deployment drives a workflow's runs once a new
// deployment replaces the one that started them.
type VersionPolicy int

const (
	// Pinned (the default): a run is driven only by the deployment of its
	// first execution, so it replays against the code that wrote its log,
	// however the workflow changes in later deployments.
	Pinned VersionPolicy = iota
	// Latest lets any deployment drive the run; on AWS Lambda that is
	// the version the queue's alias points to, i.e. the newest. Use it for
	// runs that should pick up a fix, or short runs whose log any version
	// replays (a single-turn chat). The caveat: the new code must replay
	// the old log, or the run fails with a [NondeterminismError]; check
	// recorded logs with [Replay] before deploying.
	Latest
)

// DefineOption configures a workflow in [Define].
type DefineOption func(*defineOptions)

type defineOptions struct {
	policy VersionPolicy
	limit  *engine.Limits // WithConcurrency, WithRateLimit (limits.go)
}

// WithVersionPolicy sets the workflow's [VersionPolicy] (default Pinned).
func WithVersionPolicy(p VersionPolicy) DefineOption {
	return func(o *defineOptions) { o.policy = p }
}
