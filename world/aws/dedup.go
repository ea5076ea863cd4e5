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
// marker item, and the marker is trusted only once its message is known to
// be sent. Enqueue writes the marker pending, sends, then marks it sent;
// only a sent marker drops a later Enqueue of the key. A pending marker is
// what a crash, a failed send or a cancelled context between the calls
// leaves behind, with or without a message: an Enqueue that finds one
// takes it over and sends. So no interleaving of crashes and retries
// leaves a key with a marker and no message; the price is a duplicate
// message when the send did happen, which the runtime tolerates. The
// delivery of a message with the key removes the marker. A marker also
// lapses dedupGrace after its message became visible, for a handler that
// skipped Delivered: removing a marker early costs a duplicate, keeping
// one too long would drop a wake-up.
const dedupGrace = 10 * time.Second

// afterSend bounds the marker's update once the send is settled. It runs
// even if the caller's context ended meanwhile: the message is sent or
// not whether the caller still waits or not.
const afterSend = 5 * time.Second

// markDedup writes key's marker, pending, for a message visible at
// visibleAt, and returns the claim that names this Enqueue's marker. It
// reports false if a sent marker of another message holds the key.
func (w *World) markDedup(ctx context.Context, key string, visibleAt time.Time) (claim string, marked bool, err error) {
	until := visibleAt.Add(dedupGrace)
	claim = rand.Text()
	av, err := marshalItem(dedupItem{
		itemKeys:  itemKeys{PK: dedupPK(key), SK: skDedup},
		Until:     until.UnixMilli(),
		Claim:     claim,
		ExpiresAt: until.Add(time.Second).Unix(),
	})
	if err != nil {
		return "", false, err
	}
	held, refused, err := w.putIf(ctx, av, expression.Or(
		expression.AttributeNotExists(expression.Name(attrPK)),
		expression.AttributeNotExists(expression.Name("sent")),
		expression.Name("until").LessThan(expression.Value(time.Now().UnixMilli())),
	))
	if err != nil {
		return "", false, fmt.Errorf("dedup key %s: %w", key, err)
	}
	if refused {
		// The SDK's retry of a put whose response was lost finds this very
		// marker: it is ours, so send.
		var marker dedupItem
		if err := unmarshalItem(held, &marker); err != nil {
			return "", false, fmt.Errorf("dedup key %s: decode marker: %w", key, err)
		}
		return claim, marker.Claim == claim, nil
	}
	return claim, true, nil
}

// markSent records that the message of the marker claim names was sent.
// A marker that is gone (the message was delivered already) or was taken
// over by another Enqueue stays as it is. The message is queued whatever
// this answers, so a failure is not Enqueue's: the marker, left pending,
// only lets a duplicate through.
func (w *World) markSent(ctx context.Context, key, claim string) {
	_, _, _ = w.updateIf(ctx, itemKeys{PK: dedupPK(key), SK: skDedup}.key(),
		expression.Set(expression.Name("sent"), expression.Value(true)),
		expression.Name("claim").Equal(expression.Value(claim)))
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
