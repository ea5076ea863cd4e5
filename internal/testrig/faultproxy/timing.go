package faultproxy

import (
	"sync"
	"time"
)

// Timed is one call the proxy forwarded while timing: when it arrived,
// the latency the model gave it, and when and how fast the upstream
// answered it.
type Timed struct {
	Call
	Arrived  time.Time
	Modelled time.Duration
	Upstream time.Duration // from forwarding the request to reading the whole answer
	Answered time.Time     // when the upstream's answer was read
}

// Due is when the model would have the call answered.
func (t Timed) Due() time.Time { return t.Arrived.Add(t.Modelled) }

// Overrun is how much later than Due the upstream answered: the
// emulator's own time beyond what the model allows for the call. Zero
// when the model's floor held.
func (t Timed) Overrun() time.Duration { return max(t.Answered.Sub(t.Due()), 0) }

// timing collects Timed calls between Time and its stop.
type timing struct {
	mu    sync.Mutex
	on    bool
	calls []Timed
}

func (t *timing) add(c Timed) {
	t.mu.Lock()
	if t.on {
		t.calls = append(t.calls, c)
	}
	t.mu.Unlock()
}

// Time records every call the upstream answers from now on, until the
// returned stop is called; stop returns them in order of answer. One
// timing at a time: a second Time restarts the first.
func (p *Proxy) Time() (stop func() []Timed) {
	p.timing.mu.Lock()
	p.timing.on, p.timing.calls = true, nil
	p.timing.mu.Unlock()
	return func() []Timed {
		p.timing.mu.Lock()
		defer p.timing.mu.Unlock()
		calls := p.timing.calls
		p.timing.on, p.timing.calls = false, nil
		return calls
	}
}
