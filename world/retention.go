package world

import (
	"context"
	"strings"
	"time"
)

// Retention: a World keeps a finished run (its entity, its log, its hooks
// and its streams) for a retention period after the run ended, then
// deletes it; a run that has not finished is never deleted, however old.
// A closed stream that belongs to no run (a responding hook's reply) is
// kept for ReplyRetention after it was closed.
const (
	// DefaultRetention is how long the durable Worlds keep a finished run
	// unless told otherwise.
	DefaultRetention = 30 * 24 * time.Hour
	// KeepForever as a retention keeps finished runs for ever.
	KeepForever time.Duration = -1
	// ReplyRetention is how long a closed reply stream is kept: its caller
	// reads it while the call lasts.
	ReplyRetention = time.Hour
)

// RetentionOrDefault is the retention a World setting d means: 0 is
// DefaultRetention, a negative d is KeepForever.
func RetentionOrDefault(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultRetention
	case d < 0:
		return KeepForever
	}
	return d
}

// RunStreamPrefix is the prefix of the names of a run's own streams: a
// stream named so belongs to the run and is deleted with it.
func RunStreamPrefix(runID string) string { return "runs/" + runID + "/" }

// IsRunStream reports whether a stream name belongs to some run, rather
// than to a call (a reply).
func IsRunStream(name string) bool { return strings.HasPrefix(name, "runs/") }

// Sweeper is implemented by Worlds that delete expired runs themselves
// (the embedded ones; DynamoDB's TTL does it for the AWS World).
//
// Optional: a World whose store expires items on its own implements
// Expirer instead; each durable World implements one of the two.
type Sweeper interface {
	// Sweep deletes up to limit finished runs whose retention has passed,
	// with their events, hooks and streams, and closed reply streams past
	// ReplyRetention. It returns how many runs it deleted; fewer than limit
	// means none is left to delete now.
	Sweep(ctx context.Context, limit int) (int, error)
}

// Expirer is implemented by Worlds whose store deletes expired items on
// its own (DynamoDB's TTL) but must first be told which items those are.
// The engine calls ExpireRun after a run's end is written, and again on
// any later delivery for the finished run, so it must be idempotent.
//
// Optional: only a store with a time to live of its own needs telling; a
// Sweeper finds expired runs by itself.
type Expirer interface {
	// ExpireRun marks what the finished run's terminal write did not touch
	// (older events, the run's streams among streams) to be deleted with
	// the run. Names of streams that are not the run's own are ignored.
	ExpireRun(ctx context.Context, runID string, streams []string) error
}
