package aws

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaworkflow/workflow/world"
)

// A standard SQS queue does not deduplicate, so a DedupKey is kept as a
// marker item: Enqueue sends only if it creates the marker, and the
// delivery of a message with that key removes it. A marker also lapses
// dedupGrace after its message became visible, which bounds the harm of a
// marker whose message was never sent (a crash between the two calls) or
// whose delivery was not reported (a handler that skipped Delivered). Only
// ever removing markers too early is safe: it costs a duplicate message,
// which the runtime tolerates; keeping one too long would drop a wake-up.
const dedupGrace = 10 * time.Second

// markDedup creates key's marker for a message visible at visibleAt. It
// reports false if a live marker of another message holds the key.
func (w *World) markDedup(ctx context.Context, key string, visibleAt time.Time) (bool, error) {
	until := visibleAt.Add(dedupGrace)
	claim := rand.Text()
	av, err := marshalItem(dedupItem{
		itemKeys:  itemKeys{PK: dedupPK(key), SK: skDedup},
		Until:     until.UnixMilli(),
		Claim:     claim,
		ExpiresAt: until.Add(time.Second).Unix(),
	})
	if err != nil {
		return false, err
	}
	held, refused, err := w.putIf(ctx, av, expression.Or(
		expression.AttributeNotExists(expression.Name(attrPK)),
		expression.Name("until").LessThan(expression.Value(time.Now().UnixMilli())),
	))
	if err != nil {
		return false, fmt.Errorf("dedup key %s: %w", key, err)
	}
	if refused {
		// The SDK's retry of a put whose response was lost finds this very
		// marker: it is ours, so send.
		var marker dedupItem
		if err := unmarshalItem(held, &marker); err != nil {
			return false, fmt.Errorf("dedup key %s: decode marker: %w", key, err)
		}
		return marker.Claim == claim, nil
	}
	return true, nil
}

// Delivered tells the World that msg has been delivered, so that its
// DedupKey no longer drops new messages. Receive calls it; a Lambda
// handler that gets messages from an SQS event source must call it for
// each message (after DecodeMessage, before acting on the message), or a
// message enqueued with the same key while the handler works would be
// dropped until the key's marker lapses. It is a no-op for a message
// without a DedupKey.
func (w *World) Delivered(ctx context.Context, msg world.Message) error {
	if msg.DedupKey == "" {
		return nil
	}
	_, err := w.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &w.opts.Table,
		Key:       itemKeys{PK: dedupPK(msg.DedupKey), SK: skDedup}.key(),
	})
	if err != nil {
		return fmt.Errorf("release dedup key %s: %w", msg.DedupKey, err)
	}
	return nil
}
