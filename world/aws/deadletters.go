package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow/world"
)

// The dead-letter queue is read with ReceiveMessage, the only way SQS
// shows a message: what a listing or a redrive receives is hidden for
// deadLetterHold, so that one pass does not meet a message twice, and
// what it leaves is made visible again when it is done. SQS's
// StartMessageMoveTask would move a whole queue in one call, but it cannot
// select messages, and emulators do not serve it; receive, send and delete
// costs 3 requests and 2 DynamoDB writes per message, on a queue that
// should stay empty.
const (
	deadLetterHold = 60 * time.Second
	// redriveMemory is how long a redrive remembers that it sent a
	// message: as long as SQS keeps one (a copy left behind in the
	// dead-letter queue cannot outlive it).
	redriveMemory = 14 * 24 * time.Hour
)

// redrivePolicy is an SQS queue's RedrivePolicy attribute.
type redrivePolicy struct {
	Target          string `json:"deadLetterTargetArn"`
	MaxReceiveCount int    `json:"maxReceiveCount"`
}

var _ world.DeadLetters = (*World)(nil)

// ListDeadLetters implements world.DeadLetters.
func (w *World) ListDeadLetters(ctx context.Context, limit int) ([]world.DeadLetter, error) {
	var letters []world.DeadLetter
	err := w.eachDeadLetter(ctx, func(d world.DeadLetter, _ string) (bool, bool, error) {
		letters = append(letters, d)
		return false, limit > 0 && len(letters) >= limit, nil
	})
	return letters, err
}

// Redrive implements world.DeadLetters. Each message is sent at most once
// for all the redrives that meet it: before the send, a marker item keyed
// by the dead letter's ID is written pending (the dedup marker of
// dedup.go, kept for redriveMemory), and marked sent after it; a redrive
// that finds it sent only deletes the dead letter. So a redrive killed
// between the send and the delete, and run again, queues no second copy.
func (w *World) Redrive(ctx context.Context, keep func(world.DeadLetter) bool) (int, error) {
	dead, err := w.deadLetterQueue(ctx)
	if err != nil {
		return 0, err
	}
	moved := 0
	err = w.eachDeadLetter(ctx, func(d world.DeadLetter, receipt string) (bool, bool, error) {
		if keep != nil && !keep(d) {
			return false, false, nil
		}
		if err := w.resendOnce(ctx, d); err != nil {
			return false, true, err
		}
		if _, err := w.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &dead, ReceiptHandle: &receipt}); err != nil {
			return false, true, fmt.Errorf("redrive: delete dead letter %s (it is queued again): %w", d.ID, err)
		}
		moved++
		return true, false, nil
	})
	return moved, err
}

// resendOnce queues the dead letter's message again, without its DedupKey
// (its marker went with its first delivery), unless a redrive sent it
// already.
func (w *World) resendOnce(ctx context.Context, d world.DeadLetter) error {
	key := "redrive/" + d.ID
	claim, marked, err := w.markDedup(ctx, key, time.Now().Add(redriveMemory))
	if err != nil {
		return fmt.Errorf("redrive %s: %w", d.ID, err)
	}
	if !marked {
		return nil
	}
	msg := d.Message
	msg.DedupKey = ""
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("redrive %s: %w", d.ID, err)
	}
	if _, err := w.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &w.opts.QueueURL, MessageBody: aws.String(string(body))}); err != nil {
		return fmt.Errorf("redrive %s: %w", d.ID, err)
	}
	settled, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterSend)
	defer cancel()
	w.markSent(settled, key, claim)
	return nil
}

// eachDeadLetter receives the dead letters, each once, and hands each to
// f with its receipt until f says stop or none is left; then it makes the
// ones it received and f did not consume (delete) visible again. A message
// that is not the World's (its body does not decode) is handed on with a
// zero Message.
func (w *World) eachDeadLetter(ctx context.Context, f func(d world.DeadLetter, receipt string) (consumed, stop bool, err error)) error {
	dead, err := w.deadLetterQueue(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var held []string // receipts to make visible again
	defer func() { w.unhide(ctx, dead, held) }()
	for {
		out, err := w.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:            &dead,
			MaxNumberOfMessages: 10,
			// A wait makes SQS look on all its servers: a short poll may
			// answer empty while messages wait.
			WaitTimeSeconds:   1,
			VisibilityTimeout: int32(deadLetterHold / time.Second),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{
				types.MessageSystemAttributeNameApproximateReceiveCount, types.MessageSystemAttributeNameSentTimestamp,
			},
		})
		if err != nil {
			return fmt.Errorf("receive dead letters: %w", err)
		}
		fresh := 0
		for _, m := range out.Messages {
			id, receipt := aws.ToString(m.MessageId), aws.ToString(m.ReceiptHandle)
			if seen[id] {
				continue // a pass longer than deadLetterHold meets it again
			}
			seen[id], fresh = true, fresh+1
			consumed, stop, err := f(deadLetter(m), receipt)
			if !consumed {
				held = append(held, receipt)
			}
			if err != nil || stop {
				return err
			}
		}
		if fresh == 0 {
			return nil
		}
	}
}

// deadLetter describes a received dead letter. SQS counts every receive,
// in both queues; the one that just took it is not a delivery.
func deadLetter(m types.Message) world.DeadLetter {
	receives, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	sent, _ := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
	msg, _ := DecodeMessage(aws.ToString(m.Body))
	return world.DeadLetter{Message: msg, ID: aws.ToString(m.MessageId), Receives: max(receives-1, 0), SentAt: time.UnixMilli(sent)}
}

// unhide makes received dead letters visible again at once, ten a
// request, even if ctx is done; a failure only leaves them hidden for
// deadLetterHold.
func (w *World) unhide(ctx context.Context, queue string, receipts []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pollGrace)
	defer cancel()
	for start := 0; start < len(receipts); start += 10 {
		var entries []types.ChangeMessageVisibilityBatchRequestEntry
		for i, r := range receipts[start:min(start+10, len(receipts))] {
			entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(r)})
		}
		_, _ = w.sqs.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &queue, Entries: entries})
	}
}

// deadLetterQueue returns the URL of the queue's dead-letter queue: the
// one Options names, else the one the queue's redrive policy names (two
// requests, once per World).
func (w *World) deadLetterQueue(ctx context.Context) (string, error) {
	w.deadMu.Lock()
	defer w.deadMu.Unlock()
	if w.deadURL == "" {
		w.deadURL = w.opts.DeadLetterQueueURL
	}
	if w.deadURL != "" {
		return w.deadURL, nil
	}
	attrs, err := w.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: &w.opts.QueueURL, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		return "", fmt.Errorf("find the dead-letter queue: %w", err)
	}
	raw := attrs.Attributes[string(types.QueueAttributeNameRedrivePolicy)]
	var policy redrivePolicy
	if raw == "" {
		return "", errors.New("find the dead-letter queue: the queue has no redrive policy, so nothing is dead-lettered")
	}
	if err := json.Unmarshal([]byte(raw), &policy); err != nil {
		return "", fmt.Errorf("find the dead-letter queue: redrive policy %q: %w", raw, err)
	}
	// arn:partition:sqs:region:account:name
	parts := strings.Split(policy.Target, ":")
	if len(parts) != 6 {
		return "", fmt.Errorf("find the dead-letter queue: %q is not a queue ARN", policy.Target)
	}
	out, err := w.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &parts[5], QueueOwnerAWSAccountId: &parts[4]})
	if err != nil {
		return "", fmt.Errorf("find the dead-letter queue %s: %w", policy.Target, err)
	}
	w.deadURL = aws.ToString(out.QueueUrl)
	return w.deadURL, nil
}
