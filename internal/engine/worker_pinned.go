package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// A worker that receives a message for a run pinned to another deployment
// cannot hand it to that deployment directly (a Lambda adapter can, by
// invoking the pinned version): it puts the message back on the queue,
// delayed, for a worker of the right deployment to take, and acknowledges
// its copy. The delay grows by a second with each hop, up to a minute: a
// run whose deployment has no worker left costs a receive a minute, and
// one that keeps landing on other deployments' workers (each lands on the
// right one with some chance) is not kept waiting long.
const (
	pinnedStep     = time.Second
	pinnedMaxDelay = time.Minute
)

func (w *Worker) leaveForDeployment(ctx context.Context, d world.Delivery, pinned *PinnedElsewhere) error {
	hop := pinnedHop(d)
	delay := min(time.Duration(hop+1)*pinnedStep, pinnedMaxDelay)
	next := world.Message{RunID: d.RunID, DeliverAt: w.Engine.now().Add(delay), DedupKey: pinnedKey(d.RunID, hop+1)}
	if err := w.queue().Enqueue(ctx, next); err != nil {
		return err // the message comes back after its visibility timeout
	}
	w.Engine.logger().Debug("workflow: run pinned to another deployment; left for it",
		logRunID, d.RunID, logDeployment, w.Engine.Deployment, "pinned_to", pinned.Deployment, "retry_in", delay)
	return w.queue().Ack(ctx, d)
}

// pinnedKey is the dedup key of the message for hop n of a run's wait for
// its deployment; it carries n, since a queue message has no counter that
// survives being enqueued again.
func pinnedKey(runID string, n int) string { return runID + "/pinned/" + strconv.Itoa(n) }

func pinnedHop(d world.Delivery) int {
	n, err := strconv.Atoi(strings.TrimPrefix(d.DedupKey, d.RunID+"/pinned/"))
	if err != nil || !strings.HasPrefix(d.DedupKey, d.RunID+"/pinned/") {
		return 0
	}
	return n
}
