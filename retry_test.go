package workflow_test

import (
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// TestBackoffsGrowUpToTheirLimit: without jitter, the delays are the
// formula's, and a late retry saturates at the limit instead of
// overflowing into a negative or zero delay.
func TestBackoffsGrowUpToTheirLimit(t *testing.T) {
	exp := workflow.ExponentialBackoff(time.Second, time.Minute, 2, workflow.NoJitter)
	lin := workflow.LinearBackoff(time.Second, 5*time.Second, 20*time.Second, workflow.NoJitter)
	for _, c := range []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"exponential 1", exp(1), time.Second},
		{"exponential 2", exp(2), 2 * time.Second},
		{"exponential 6", exp(6), 32 * time.Second},
		{"exponential 7", exp(7), time.Minute},
		{"exponential 10000", exp(10000), time.Minute},
		{"linear 1", lin(1), time.Second},
		{"linear 3", lin(3), 11 * time.Second},
		{"linear 100", lin(100), 20 * time.Second},
		{"rate below 1", workflow.ExponentialBackoff(time.Second, time.Minute, 0.5, workflow.NoJitter)(5), time.Second},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestJitterSpreadsRetries: a thousand steps that fail at once come back
// spread over the delay (full: all of it; half: its second half), never
// beyond it; the default spreads like FullJitter.
func TestJitterSpreadsRetries(t *testing.T) {
	const d = 8 * time.Second
	for _, c := range []struct {
		name     string
		backoff  func(int) time.Duration
		low, top time.Duration
	}{
		{"full", workflow.ExponentialBackoff(d, d, 2, workflow.FullJitter), 0, d},
		{"half", workflow.ExponentialBackoff(d, d, 2, workflow.HalfJitter), d / 2, d},
		{"default", workflow.DefaultBackoff, 0, 8 * time.Second}, // retry 4: 8 s
	} {
		least, most := c.top, c.low
		for range 1000 {
			got := c.backoff(4)
			if got < c.low || got > c.top {
				t.Fatalf("%s: delay %v outside [%v, %v]", c.name, got, c.low, c.top)
			}
			least, most = min(least, got), max(most, got)
		}
		span := c.top - c.low
		if least > c.low+span/10 || most < c.top-span/10 {
			t.Errorf("%s: 1000 delays span only [%v, %v] of [%v, %v]", c.name, least, most, c.low, c.top)
		}
	}
}
