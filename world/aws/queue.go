package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow/world"
)

// SQS limits: a message's delay and a receive's long poll.
const (
	maxDelay    = 900 * time.Second
	maxLongPoll = 20 * time.Second
)

// Enqueue implements world.Queue. DeliverAt becomes the message's
// DelaySeconds, rounded up to whole seconds and capped at SQS's 15 minutes:
// a message due later goes through the scheduler if the World has one
// (longsleep.go), else it arrives early, as world.Message allows, and is
// queued again for the rest (earlywake.go). A DedupKey is checked against
// the key's marker item first (see dedup.go).
func (w *World) Enqueue(ctx context.Context, msg world.Message) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("enqueue for run %s: %w", msg.RunID, err)
	}
	delay := max(time.Until(msg.DeliverAt), 0)
	if w.scheduler != nil && delay > w.delayLimit {
		return w.schedule(ctx, msg, string(body))
	}
	delay = min(delay, w.delayLimit)
	seconds := int32(math.Ceil(delay.Seconds()))
	send := func(ctx context.Context) error {
		_, err := w.sqs.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl:     &w.opts.QueueURL,
			MessageBody:  aws.String(string(body)),
			DelaySeconds: seconds,
		})
		if err != nil {
			return fmt.Errorf("enqueue for run %s: %w", msg.RunID, err)
		}
		return nil
	}
	if msg.DedupKey == "" {
		return send(ctx)
	}
	claim, marked, err := w.markDedup(ctx, msg.DedupKey, time.Now().Add(time.Duration(seconds)*time.Second))
	if err != nil {
		return fmt.Errorf("enqueue for run %s: %w", msg.RunID, err)
	}
	if !marked {
		return nil
	}
	// A failed send leaves the marker pending, which drops nothing.
	if err := send(ctx); err != nil {
		return err
	}
	settled, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterSend)
	defer cancel()
	w.markSent(settled, msg.DedupKey, claim)
	return nil
}

// Receive implements world.Queue with SQS long polls of up to 20 seconds.
// When ctx has a deadline, no poll outlives it. A poll cut short by ctx
// is left to finish and releases what it takes (see poll). Visibility is
// rounded up to whole seconds, at least one (the SDK does not send a zero,
// which would stand for the queue's default).
func (w *World) Receive(ctx context.Context, visibility time.Duration) (world.Delivery, error) {
	hide := max(int32(math.Ceil(visibility.Seconds())), 1)
	for {
		wait := maxLongPoll
		if deadline, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(deadline).Truncate(time.Second))
		}
		m, err := w.poll(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    &w.opts.QueueURL,
			MaxNumberOfMessages:         1,
			WaitTimeSeconds:             int32(max(wait, 0) / time.Second),
			VisibilityTimeout:           hide,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
		})
		if err != nil {
			return world.Delivery{}, err
		}
		if m == nil {
			if wait < time.Second {
				// A short poll: pause so the last second is not a busy loop.
				pause(ctx, 100*time.Millisecond)
			}
			continue
		}
		msg, err := DecodeMessage(aws.ToString(m.Body))
		if err != nil {
			// Not one of ours: leave it to the queue's redrive policy.
			return world.Delivery{}, fmt.Errorf("receive: message %s: %w", aws.ToString(m.MessageId), err)
		}
		attempt, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
		d := world.Delivery{Message: msg, Receipt: aws.ToString(m.ReceiptHandle), Attempt: attempt}
		if err := w.Delivered(ctx, msg); err != nil {
			w.releaseDetached(ctx, d)
			return world.Delivery{}, fmt.Errorf("receive: %w", err)
		}
		early, err := w.requeueReceived(ctx, d)
		if err != nil {
			w.releaseDetached(ctx, d)
			return world.Delivery{}, fmt.Errorf("receive: %w", err)
		}
		if early {
			continue
		}
		return d, nil
	}
}

// poll makes one ReceiveMessage call and returns the message it took, if
// any. The call is not cut by ctx: SQS finishes a long poll whose client
// has gone and hides the message it takes for the whole visibility timeout,
// with nobody to process it. So the call runs to the end of its wait on a
// context of its own, and if ctx is done first, poll returns ctx's error at
// once and the call releases whatever it takes when it ends. Close waits
// for such calls.
func (w *World) poll(ctx context.Context, in *sqs.ReceiveMessageInput) (*types.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		out *sqs.ReceiveMessageOutput
		err error
	}
	done, abandoned := make(chan result), make(chan struct{})
	w.polls.Add(1)
	go func() {
		defer w.polls.Done()
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(in.WaitTimeSeconds)*time.Second+pollGrace)
		defer cancel()
		out, err := w.sqs.ReceiveMessage(callCtx, in)
		select {
		case done <- result{out, err}:
		case <-abandoned:
			if err == nil {
				for _, m := range out.Messages {
					w.releaseDetached(callCtx, world.Delivery{Receipt: aws.ToString(m.ReceiptHandle)})
				}
			}
		}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("receive: %w", r.err)
		}
		if len(r.out.Messages) == 0 {
			return nil, nil
		}
		return &r.out.Messages[0], nil
	case <-ctx.Done():
		close(abandoned)
		return nil, ctx.Err()
	}
}

// pollGrace is how long a long poll's HTTP call may take beyond its wait.
const pollGrace = 10 * time.Second

// Release implements world.Queue: the message's visibility timeout is set
// to zero. A receipt SQS no longer honours (the message was deleted or
// received again) is ignored, as Ack ignores it.
func (w *World) Release(ctx context.Context, d world.Delivery) error {
	_, err := w.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          &w.opts.QueueURL,
		ReceiptHandle:     aws.String(d.Receipt),
		VisibilityTimeout: 0,
	})
	var invalid *types.ReceiptHandleIsInvalid
	var notInflight *types.MessageNotInflight
	if err != nil && !errors.As(err, &invalid) && !errors.As(err, &notInflight) {
		return fmt.Errorf("release message for run %s: %w", d.RunID, err)
	}
	return nil
}

// releaseDetached releases a delivery nobody will process, even though
// ctx, the receiver's, may be done; a failure only leaves the message
// hidden until its visibility timeout, so it is not reported.
func (w *World) releaseDetached(ctx context.Context, d world.Delivery) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pollGrace)
	defer cancel()
	_ = w.Release(ctx, d)
}

// Ack implements world.Queue. Acknowledging twice is harmless: an invalid
// receipt, which MiniStack reports for a deleted message, is ignored, as
// SQS itself ignores a stale one.
func (w *World) Ack(ctx context.Context, d world.Delivery) error {
	_, err := w.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &w.opts.QueueURL, ReceiptHandle: aws.String(d.Receipt)})
	var invalid *types.ReceiptHandleIsInvalid
	if err != nil && !errors.As(err, &invalid) {
		return fmt.Errorf("ack message for run %s: %w", d.RunID, err)
	}
	return nil
}

// DecodeMessage turns the body of an SQS message the World sent into a
// world.Message, for a Lambda handler fed by an SQS event source, where the
// runtime does not call Receive. Such a handler must also call
// (*World).Delivered for each message before acting on it, as Receive
// does; see Delivered.
func DecodeMessage(body string) (world.Message, error) {
	var msg world.Message
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		return world.Message{}, fmt.Errorf("decode queue message: %w", err)
	}
	if msg.RunID == "" {
		return world.Message{}, errors.New("decode queue message: no run ID")
	}
	return msg, nil
}

// pause waits for d or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
