package bench

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// base is the process-wide origin of the monotonic timestamps that cross a
// World (stream chunks carry their write time as nanoseconds since base).
var base = time.Now()

// sinceBase is the monotonic time since base, in nanoseconds.
func sinceBase() int64 { return int64(time.Since(base)) }

// Collector gathers the timestamps the benchmark workflows and steps record,
// keyed by run ID. It is process-wide (see Samples) because steps and
// workflow code cannot be handed a collector: they are registered once, at
// package level. Each key keeps its first timestamp, so a step attempt run
// twice (at least once) or workflow code replayed does not move a clock.
type Collector struct {
	mu   sync.Mutex
	runs map[string]map[string]time.Time
	wait map[string]chan struct{} // closed when runID+"\x00"+key is marked
}

// Samples is the collector the benchmark workflows record into.
var Samples = &Collector{}

// Mark records the current time under key for run, unless key is set.
func (c *Collector) Mark(run, key string) { c.MarkAt(run, key, time.Now()) }

// MarkAt records t under key for run, unless key is set.
func (c *Collector) MarkAt(run, key string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]map[string]time.Time{}
		c.wait = map[string]chan struct{}{}
	}
	m := c.runs[run]
	if m == nil {
		m = map[string]time.Time{}
		c.runs[run] = m
	}
	if _, ok := m[key]; ok {
		return
	}
	m[key] = t
	if ch, ok := c.wait[run+"\x00"+key]; ok {
		close(ch)
		delete(c.wait, run+"\x00"+key)
	}
}

// Get returns the time recorded under key for run.
func (c *Collector) Get(run, key string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.runs[run][key]
	return t, ok
}

// Wait blocks until key is recorded for run, and returns its time.
func (c *Collector) Wait(ctx context.Context, run, key string) (time.Time, error) {
	c.mu.Lock()
	if c.runs == nil {
		c.runs = map[string]map[string]time.Time{}
		c.wait = map[string]chan struct{}{}
	}
	if t, ok := c.runs[run][key]; ok {
		c.mu.Unlock()
		return t, nil
	}
	ch, ok := c.wait[run+"\x00"+key]
	if !ok {
		ch = make(chan struct{})
		c.wait[run+"\x00"+key] = ch
	}
	c.mu.Unlock()
	select {
	case <-ch:
		t, _ := c.Get(run, key)
		return t, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// Forget drops a run's samples once they are read, so long suites do not
// hold every run's timestamps.
func (c *Collector) Forget(run string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.runs, run)
}

// Keys a run's samples are recorded under.
func startKey(i int) string { return "start/" + strconv.Itoa(i) }
func endKey(i int) string   { return "end/" + strconv.Itoa(i) }
func awaitKey(i int) string { return "await/" + strconv.Itoa(i) }

const joinKey = "join"
