package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var _ world.Sweeper = (*World)(nil)

// WithRetention keeps finished runs for d after they end, until a Sweep
// deletes them (world.KeepForever, the default, never). The in-memory World
// keeps everything by default, unlike the durable ones: it lives no longer
// than its process, and a test that skips time must not lose its runs.
func WithRetention(d time.Duration) Option {
	return func(w *World) { w.retention = world.RetentionOrDefault(d) }
}

// Sweep implements world.Sweeper. A run's end is its UpdatedAt: nothing
// updates a finished run.
func (w *World) Sweep(_ context.Context, limit int) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	for name, s := range w.streams {
		if s.closed && !world.IsRunStream(name) && !s.closedAt.Add(world.ReplyRetention).After(now) {
			delete(w.streams, name)
		}
	}
	if w.retention == world.KeepForever {
		return 0, nil
	}
	var gone []string
	for _, id := range w.order {
		if len(gone) == limit {
			break
		}
		if r := w.runs[id].run; r.Status.Terminal() && !r.UpdatedAt.Add(w.retention).After(now) {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		w.deleteRunLocked(id)
	}
	w.order = slices.DeleteFunc(w.order, func(id string) bool { return w.runs[id] == nil })
	return len(gone), nil
}

// deleteRunLocked deletes a run, its streams and the hooks it still holds.
func (w *World) deleteRunLocked(id string) {
	delete(w.runs, id)
	prefix := world.RunStreamPrefix(id)
	for name := range w.streams {
		if strings.HasPrefix(name, prefix) {
			delete(w.streams, name)
		}
	}
	for token, h := range w.hooks {
		if h.RunID == id {
			delete(w.hooks, token)
		}
	}
}
