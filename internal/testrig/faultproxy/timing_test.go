package faultproxy_test

import (
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
)

// TestTimeRecordsTheCallsBetweenItsStartAndStop: each call answered while
// timing is there once, named, with the latency the model gave it, and
// answered no sooner than the model's half of the trip after it arrived;
// a call before Time or after stop is not.
func TestTimeRecordsTheCallsBetweenItsStartAndStop(t *testing.T) {
	f := newFixture(t)
	const modelled = 40 * time.Millisecond
	f.proxy.SetLatency(func(faultproxy.Call) time.Duration { return modelled })
	if err := f.putItem(f.via, "before"); err != nil {
		t.Fatal(err)
	}
	stop := f.proxy.Time()
	for _, pk := range []string{"a", "b"} {
		if err := f.putItem(f.via, pk); err != nil {
			t.Fatal(err)
		}
	}
	calls := stop()
	if err := f.putItem(f.via, "after"); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("timed %d calls, want the 2 made while timing: %+v", len(calls), calls)
	}
	for _, c := range calls {
		if c.String() != "DynamoDB.PutItem" || c.Modelled != modelled {
			t.Errorf("timed %s modelled at %v, want DynamoDB.PutItem at %v", c, c.Modelled, modelled)
		}
		if c.Upstream <= 0 || c.Answered.Sub(c.Arrived) < modelled/2+c.Upstream {
			t.Errorf("%s answered %v after it arrived, upstream %v: sooner than the model's half of the trip plus the upstream's time", c, c.Answered.Sub(c.Arrived), c.Upstream)
		}
	}
}

// TestOverrunIsTheTimePastTheModel: a call the upstream answers within
// the model has no overrun; one answered later overruns by the difference.
func TestOverrunIsTheTimePastTheModel(t *testing.T) {
	at := time.Now()
	c := faultproxy.Timed{Arrived: at, Modelled: 10 * time.Millisecond, Answered: at.Add(8 * time.Millisecond)}
	if got := c.Overrun(); got != 0 {
		t.Errorf("answered within the model: overrun %v, want 0", got)
	}
	c.Answered = at.Add(250 * time.Millisecond)
	if got := c.Overrun(); got != 240*time.Millisecond {
		t.Errorf("answered 250 ms after it arrived, modelled 10 ms: overrun %v, want 240ms", got)
	}
}
