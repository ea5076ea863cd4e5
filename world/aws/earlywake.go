package aws

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaworkflow/workflow/world"
)

// earlyBy is how far ahead of its DeliverAt a delivered message must be to
// count as early. A message due within it goes to the engine, which waits
// out so short a rest inline (its InlineWait is a second); this also
// absorbs SQS's whole-second delays and clocks a little apart.
const earlyBy = time.Second

// RequeueIfEarly handles a message delivered before it is due: without a
// scheduler, a wake-up due beyond SQS's 15-minute delay limit arrives
// every 15 minutes until it is due. Replaying the run for each of those
// hops (a lease, the log, the replay, the lease again) would cost a 7-day
// sleep about 670 replays; instead an early message costs one read of the
// run's log head and is queued again for the rest of its delay, unless the
// run has finished or is gone, which ends the chain. It reports whether
// msg was early: if so, the caller drops its copy without processing it.
// Receive calls it; a Lambda handler fed by an SQS event source must call
// it after Delivered, as Receive does.
func (w *World) RequeueIfEarly(ctx context.Context, msg world.Message) (early bool, err error) {
	if time.Until(msg.DeliverAt) <= earlyBy {
		return false, nil
	}
	live, err := w.runLive(ctx, msg.RunID)
	if err != nil {
		return true, fmt.Errorf("early wake-up for run %s: %w", msg.RunID, err)
	}
	if !live {
		return true, nil
	}
	return true, w.Enqueue(ctx, msg)
}

// runLive reports whether a run exists and has not finished, from its log
// head: one small eventually consistent GetItem. A stale answer costs at
// most one more hop of a run that has just finished.
func (w *World) runLive(ctx context.Context, runID string) (bool, error) {
	out, err := w.ddb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &w.opts.Table,
		Key:       itemKeys{PK: runPK(runID), SK: skLogHead}.key(),
	})
	if err != nil {
		return false, fmt.Errorf("read log head: %w", err)
	}
	if out.Item == nil {
		return false, nil
	}
	var head logHead
	if err := unmarshalItem(out.Item, &head); err != nil {
		return false, fmt.Errorf("decode log head: %w", err)
	}
	return !head.Finished, nil
}

// requeueReceived is Receive's part: an early delivery is queued again and
// its copy deleted. It reports whether d was early.
func (w *World) requeueReceived(ctx context.Context, d world.Delivery) (bool, error) {
	early, err := w.RequeueIfEarly(ctx, d.Message)
	if err != nil || !early {
		return early, err
	}
	if err := w.Ack(ctx, d); err != nil {
		// The copy comes back after its visibility timeout and finds the
		// requeued message's dedup marker, or hops again: no wake-up lost.
		return true, err
	}
	return true, nil
}
