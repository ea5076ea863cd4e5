package workflow

import (
	"math"
	"math/rand/v2"
	"time"
)

// Jitter says how much of a retry's delay is drawn at random. Steps that
// fail together (an outage of what they call) retry together unless their
// delays are spread: with jitter, a thousand runs that failed in the same
// second come back over the whole delay instead of in the same instant.
// See [Exponential Backoff And Jitter] for the measurements behind it.
//
// The delay is drawn once, when the attempt fails, and recorded in the
// log with the failure, so a replay sees the same retry time.
//
// [Exponential Backoff And Jitter]: https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
type Jitter int

const (
	// FullJitter draws the delay uniformly between zero and the backoff's
	// delay: the widest spread, and the default.
	FullJitter Jitter = iota
	// HalfJitter waits at least half the delay and draws the other half.
	HalfJitter
	// NoJitter waits exactly the delay.
	NoJitter
)

// apply returns d after the jitter.
func (j Jitter) apply(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	switch j {
	case FullJitter:
		return time.Duration(rand.Int64N(int64(d) + 1))
	case HalfJitter:
		return d/2 + time.Duration(rand.Int64N(int64(d-d/2)+1))
	default:
		return d
	}
}

// ExponentialBackoff returns a backoff for [WithBackoff]: the first retry
// waits first, each later one rate times the one before (a rate below 1
// counts as 1), never more than limit, and then jitter spreads it.
func ExponentialBackoff(first, limit time.Duration, rate float64, jitter Jitter) func(retry int) time.Duration {
	rate = max(rate, 1)
	return func(retry int) time.Duration {
		d := float64(max(first, 0)) * math.Pow(rate, float64(max(retry-1, 0)))
		return jitter.apply(capped(d, limit))
	}
}

// LinearBackoff returns a backoff for [WithBackoff]: the first retry waits
// first, each later one step longer, never more than limit, and then
// jitter spreads it.
func LinearBackoff(first, step, limit time.Duration, jitter Jitter) func(retry int) time.Duration {
	return func(retry int) time.Duration {
		d := float64(max(first, 0)) + float64(max(step, 0))*float64(max(retry-1, 0))
		return jitter.apply(capped(d, limit))
	}
}

// capped is d nanoseconds, at most limit; computed in floating point so
// that a late retry's delay saturates at the limit instead of
// overflowing.
func capped(d float64, limit time.Duration) time.Duration {
	if d >= float64(limit) {
		return max(limit, 0)
	}
	return time.Duration(d)
}

// DefaultBackoff is a step's backoff unless [WithBackoff] sets another:
// 1 s before the first retry, doubling up to 1 min, with [FullJitter].
// AWS Lambda durable functions' default waits 5 s first, with the same
// doubling, limit and jitter, and tries six times in all; to match it:
//
//	workflow.WithBackoff(workflow.ExponentialBackoff(5*time.Second, time.Minute, 2, workflow.FullJitter)),
//	workflow.WithMaxRetries(5)
func DefaultBackoff(retry int) time.Duration { return defaultBackoff(retry) }

var defaultBackoff = ExponentialBackoff(time.Second, time.Minute, 2, FullJitter)
