package bench

import (
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
)

// TestEmulatorOverrunCountsHeldTimeOnce: the overruns of calls held up
// together count once, only inside the span asked about, and a long poll's
// wait for a message is no overrun.
func TestEmulatorOverrunCountsHeldTimeOnce(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	call := func(op string, arrived, modelled, answered int) faultproxy.Timed {
		service, name := "DynamoDB", op
		if op == "ReceiveMessage" {
			service = "SQS"
		}
		m := time.Duration(modelled) * time.Millisecond
		return faultproxy.Timed{Call: faultproxy.Call{Service: service, Op: name}, Arrived: at(arrived), Modelled: m, Answered: at(answered), Upstream: at(answered).Sub(at(arrived)) - m/2}
	}
	calls := []faultproxy.Timed{
		call("Query", 0, 10, 110),          // 100 ms past its model, from 10 to 110
		call("GetItem", 20, 10, 100),       // held up with the Query: inside 10-110
		call("PutItem", 200, 10, 205),      // within its model
		call("Query", 300, 10, 360),        // 50 ms, from 310 to 360
		call("ReceiveMessage", 0, 5, 1000), // a long poll's wait
	}
	if got := emulatorOverrun(calls, at(0), at(1000)); got != 150*time.Millisecond {
		t.Errorf("overrun %v, want 150ms: 100 from the first Query and the GetItem held with it, 50 from the second", got)
	}
	if got := emulatorOverrun(calls, at(50), at(330)); got != 80*time.Millisecond {
		t.Errorf("overrun in 50-330 ms %v, want 80ms: 60 of the first Query, 20 of the second", got)
	}
	if got := emulatorMs(calls); got["DynamoDB.Query"] != 160 || len(got) != 3 {
		t.Errorf("emulator time per operation %v, want the two Queries' 105 + 55 ms and no long poll", got)
	}
}
