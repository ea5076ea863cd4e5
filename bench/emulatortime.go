package bench

import (
	"cmp"
	"slices"
	"time"

	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
)

// callTimer is a World whose calls can be timed at the latency proxy
// they pass through (aws-inregion). TimeCalls returns nil if they pass
// through none.
type callTimer interface {
	TimeCalls() (stop func() []faultproxy.Timed)
}

// TimeCalls starts timing the World's calls at its latency proxy.
func (h *hopTimed) TimeCalls() func() []faultproxy.Timed {
	if h.proxy == nil {
		return nil
	}
	return h.proxy.Time()
}

// emulatorWork reports whether a call's time beyond the model is the
// emulator's work. A long poll (SQS ReceiveMessage) waits for a message
// by design: its time is the queue hop, reported on its own.
func emulatorWork(c faultproxy.Timed) bool { return c.String() != "SQS.ReceiveMessage" }

// emulatorOverrun is how much of [from, to] some call of calls spent past
// its modelled latency because the emulator had not answered yet: the
// union of the calls' overruns, so that calls held up together (the
// emulator answers one request at a time) count once. On AWS a call
// takes its modelled latency, so this is time a real deployment would not
// spend, if the calls it overlaps were on the measured path; it bounds
// what the emulator added to the span from above.
func emulatorOverrun(calls []faultproxy.Timed, from, to time.Time) time.Duration {
	// Spans as offsets from from, clipped to [0, to-from].
	type span struct{ start, end time.Duration }
	var spans []span
	for _, c := range calls {
		if !emulatorWork(c) || c.Overrun() == 0 {
			continue
		}
		s := span{start: max(c.Due().Sub(from), 0), end: min(c.Answered.Sub(from), to.Sub(from))}
		if s.end > s.start {
			spans = append(spans, s)
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var total, covered time.Duration // covered: the end of the union so far
	for _, s := range spans {
		if start := max(s.start, covered); s.end > start {
			total += s.end - start
			covered = s.end
		}
	}
	return total
}

// emulatorMs is the time the emulator took to answer calls, per
// operation, in milliseconds.
func emulatorMs(calls []faultproxy.Timed) map[string]float64 {
	out := map[string]float64{}
	for _, c := range calls {
		if emulatorWork(c) {
			out[c.String()] += float64(c.Upstream) / float64(time.Millisecond)
		}
	}
	return out
}

// lessEmulator is the clock of a metric reported less the emulator's
// overrun: the same span as the metric it follows.
const lessEmulator = "as the metric without _net, less the time in it some call ran past its modelled latency because the emulator had not answered"

// netClock keeps a phase's spans so that each can also be reported less
// the emulator's overrun in it, on a World behind the latency proxy.
type netClock struct {
	stop  func() []faultproxy.Timed // nil: the World passes no proxy
	spans [][2]time.Time
}

// netClock starts timing the calls of the World under test.
func (s *suite) netClock() *netClock {
	c := &netClock{}
	if sdk, ok := s.e.(*sdkEngine); ok {
		if t, ok := sdk.w.(callTimer); ok {
			c.stop = t.TimeCalls()
		}
	}
	return c
}

// span records one sample's span.
func (c *netClock) span(from, to time.Time) {
	if c.stop != nil {
		c.spans = append(c.spans, [2]time.Time{from, to})
	}
}

// net stops timing and returns every span less the emulator's overrun in
// it; nil when the World passes no proxy.
func (c *netClock) net() []time.Duration {
	if c.stop == nil {
		return nil
	}
	calls := c.stop()
	out := make([]time.Duration, 0, len(c.spans))
	for _, sp := range c.spans {
		out = append(out, sp[1].Sub(sp[0])-emulatorOverrun(calls, sp[0], sp[1]))
	}
	return out
}
