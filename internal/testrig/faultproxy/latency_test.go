package faultproxy_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
)

// TestLatencyHoldsTheAnswer: a call the model gives 300 ms is answered no
// sooner, and its write is carried out; a call the model gives nothing
// passes as before. (Lower bounds only: a loaded machine makes calls
// slower, never faster.)
func TestLatencyHoldsTheAnswer(t *testing.T) {
	f := newFixture(t)
	const modelled = 300 * time.Millisecond
	f.proxy.SetLatency(func(c faultproxy.Call) time.Duration {
		if c.Op == "PutItem" {
			return modelled
		}
		return 0
	})
	start := time.Now()
	if err := f.putItem(f.via, "slow"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < modelled {
		t.Errorf("the put was answered after %v, before its modelled %v", took, modelled)
	}
	if !f.itemExists(t, "slow") {
		t.Error("the held put was not carried out")
	}
	f.proxy.SetLatency(nil)
	if err := f.putItem(f.via, "fast"); err != nil {
		t.Fatal(err)
	}
}

// TestInRegionDistribution: each operation's draws centre on its median,
// with the small spread the model states, and an operation the table does
// not name takes its service's default.
func TestInRegionDistribution(t *testing.T) {
	l := faultproxy.InRegion()
	for _, c := range []struct {
		call   faultproxy.Call
		median time.Duration
	}{
		{faultproxy.Call{Service: "DynamoDB", Op: "TransactWriteItems"}, 10 * time.Millisecond},
		{faultproxy.Call{Service: "DynamoDB", Op: "GetItem"}, 2 * time.Millisecond},
		{faultproxy.Call{Service: "DynamoDB", Op: "DescribeTable"}, 5 * time.Millisecond},
		{faultproxy.Call{Service: "SQS", Op: "SendMessage"}, 6 * time.Millisecond},
	} {
		draws := make([]time.Duration, 10001)
		for i := range draws {
			draws[i] = l(c.call)
		}
		slices.Sort(draws)
		p50, p75, p99 := draws[5000], draws[7500], draws[9900]
		if p50 < c.median*95/100 || p50 > c.median*105/100 {
			t.Errorf("%s: median %v, want about %v", c.call, p50, c.median)
		}
		if r := float64(p75) / float64(p50); r < 1.1 || r > 1.3 {
			t.Errorf("%s: p75 is %.2f× the median, want about 1.18×", c.call, r)
		}
		if r := float64(p99) / float64(p50); r < 1.5 || r > 2.2 {
			t.Errorf("%s: p99 is %.2f× the median, want about 1.8×", c.call, r)
		}
	}
}
