package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// queueHops is how many queue hops openAWS times before the worker starts.
const queueHops = 20

// hopTimed is a World whose queue hop was timed when it was opened, while
// no worker took its messages: the suite reports it as the metric
// queue_hop, the part of TTFS and TTR that the queue, not this SDK,
// decides (MiniStack answers a waiting long poll only every 100 ms).
type hopTimed struct {
	*awsworld.World
	hops  []time.Duration
	proxy *faultproxy.Proxy // nil unless the calls go through the latency proxy
}

// QueueHops returns the hops timed.
func (h *hopTimed) QueueHops() []time.Duration { return h.hops }

// timeQueueHops times n hops of the World's queue: a message enqueued
// while a receiver waits, from the Enqueue call to the Receive's return.
func timeQueueHops(ctx context.Context, w world.World, n int) ([]time.Duration, error) {
	hops := make([]time.Duration, 0, n)
	for i := range n {
		type received struct {
			at  time.Time
			err error
		}
		got := make(chan received, 1)
		go func() {
			d, err := w.Receive(ctx, time.Minute)
			at := time.Now()
			if err == nil {
				err = w.Ack(ctx, d)
			}
			got <- received{at, err}
		}()
		time.Sleep(50 * time.Millisecond) // the receiver is waiting
		t0 := time.Now()
		if err := w.Enqueue(ctx, world.Message{RunID: fmt.Sprintf("queue-hop-%d", i)}); err != nil {
			return nil, err
		}
		r := <-got
		if r.err != nil {
			return nil, r.err
		}
		hops = append(hops, r.at.Sub(t0))
	}
	return hops, nil
}
