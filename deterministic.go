package workflow

import "time"

// Now returns the workflow's deterministic time: when the most recent event
// the workflow has seen was recorded. It is the same on every replay; use
// it instead of time.Now in workflow code.
func Now(ctx Context) time.Time { return ctx.engine().Now() }

// Random returns a pseudo-random number in [0, 1), drawn from a source
// seeded by the run's ID, so replays draw the same numbers. It is not for
// secrets: use crypto/rand in a step for those.
func Random(ctx Context) float64 { return ctx.engine().Rand().Float64() }

// RandomN returns a pseudo-random int in [0, n), like Random.
func RandomN(ctx Context, n int) int { return ctx.engine().Rand().IntN(n) }

// UUID returns a version 4 UUID drawn from the run's deterministic source.
func UUID(ctx Context) string { return ctx.engine().UUID() }

// IsReplaying reports whether the workflow is re-executing recorded
// history, e.g. to log something only the first time it happens.
func IsReplaying(ctx Context) bool { return ctx.engine().Replaying() }
