package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// Run.LastSlot comes from the run's log head, which every append moves
// anyway, and never from the run item: keeping it there would write the
// run item, and so the listing indexes it is projected into, on every
// append. The head sorts right before the run item in the run's partition
// ("ev#head" < "run"), so one Query reads both.

// GetRun implements world.Store with one consistent Query of the run's log
// head, inbox and entity.
func (w *World) GetRun(ctx context.Context, id string) (world.Run, error) {
	avs, err := w.queryRange(ctx, runPK(id), skLogHead, skRun)
	if err != nil {
		return world.Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	return w.runFromRange(ctx, id, avs)
}

// ReadRun implements world.RunReader with one consistent Query of the
// run's partition from the run item down to slot after+1: the run, its
// inbox (the messages themselves: the fold that follows the lease needs
// no read of its own), the log head and the events, newest first. A log tail that does
// not fit the Query's first page (1 MB) is not read on: the run comes
// back alone, so that a delivery that does nothing with the log (dropped,
// or deferred to the lease's holder) costs one request however long the
// log is.
func (w *World) ReadRun(ctx context.Context, id string, after int64) (world.Run, []world.Event, []world.InboxMessage, bool, error) {
	avs, more, err := w.queryNewestFirst(ctx, runPK(id), eventSK(max(after, 0)+1), skRun)
	if err != nil {
		return world.Run{}, nil, nil, false, fmt.Errorf("read run %s: %w", id, err)
	}
	slices.Reverse(avs)
	n := 0
	for n < len(avs) && isEventItem(avs[n]) {
		n++
	}
	run, err := w.runFromRange(ctx, id, avs[n:])
	if err != nil || more {
		return run, nil, nil, false, err
	}
	events, err := w.decodeEvents(ctx, id, max(after, 0), avs[:n])
	if err != nil {
		return run, nil, nil, false, err
	}
	inbox, err := w.decodeInbox(ctx, id, slices.DeleteFunc(avs[n:], func(av ddbItem) bool { return !isInboxItem(av) }))
	return run, events, inbox, err == nil, err
}

// queryNewestFirst reads the first page of the items of partition pk
// with sort keys from..to, last key first, with a strongly consistent
// read, and reports whether more items are left.
func (w *World) queryNewestFirst(ctx context.Context, pk, from, to string) ([]ddbItem, bool, error) {
	cond, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(attrPK).Equal(expression.Value(pk)).
			And(expression.Key(attrSK).Between(expression.Value(from), expression.Value(to))),
	).Build()
	if err != nil {
		return nil, false, err
	}
	out, err := w.ddb.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &w.opts.Table,
		KeyConditionExpression:    cond.KeyCondition(),
		ExpressionAttributeNames:  cond.Names(),
		ExpressionAttributeValues: cond.Values(),
		ConsistentRead:            aws.Bool(true),
		ScanIndexForward:          aws.Bool(false),
	})
	if err != nil {
		return nil, false, err
	}
	return out.Items, len(out.LastEvaluatedKey) > 0, nil
}

// isEventItem reports whether av is one of a log's events (not its head).
func isEventItem(av ddbItem) bool {
	s, ok := av[attrSK].(*types.AttributeValueMemberS)
	return ok && strings.HasPrefix(s.Value, "ev#") && s.Value != skLogHead
}

// runFromRange decodes the run from its partition's items from the log
// head through the run item.
func (w *World) runFromRange(ctx context.Context, id string, avs []ddbItem) (world.Run, error) {
	var head logHead
	inbox := 0
	for _, av := range avs {
		switch {
		case isInboxItem(av):
			inbox++ // they sort between the head and the run
		case isItem(av, skLogHead):
			if err := unmarshalItem(av, &head); err != nil {
				return world.Run{}, fmt.Errorf("get run %s: decode log head: %w", id, err)
			}
		case isItem(av, skRun) && w.expired(expiresAt(av)):
			return world.Run{}, fmt.Errorf("run %s: %w", id, world.ErrRunNotFound)
		case isItem(av, skRun):
			run, err := w.runFromItem(ctx, av)
			run.LastSlot, run.Inbox = lastSlot(head), inbox
			return run, err
		}
	}
	return world.Run{}, fmt.Errorf("run %s: %w", id, world.ErrRunNotFound)
}

// lastSlot is the slot of the last event a log head has let in.
func lastSlot(head logHead) int64 { return max(head.Next-1, 0) }

// maxBatchGet is DynamoDB's limit on the keys of one BatchGetItem;
// batchGetAttempts bounds the tries for keys it leaves unprocessed.
const (
	maxBatchGet      = 100
	batchGetAttempts = 5
)

// readHeads reads the log heads of runs with consistent BatchGetItems and
// hands each to f. A run with no head is left out.
func (w *World) readHeads(ctx context.Context, runIDs []string, f func(logHead)) error {
	keys := make([]map[string]types.AttributeValue, len(runIDs))
	for i, id := range runIDs {
		keys[i] = w.logHeadKey(id)
	}
	return w.batchGet(ctx, keys, func(av map[string]types.AttributeValue) error {
		var head logHead
		if err := unmarshalItem(av, &head); err != nil {
			return fmt.Errorf("decode log head: %w", err)
		}
		f(head)
		return nil
	})
}

// batchGet reads items by key with consistent BatchGetItems of up to
// maxBatchGet keys each, and hands each item found to f, in no order.
func (w *World) batchGet(ctx context.Context, keys []map[string]types.AttributeValue, f func(map[string]types.AttributeValue) error) error {
	for start := 0; start < len(keys); start += maxBatchGet {
		batch := keys[start:min(start+maxBatchGet, len(keys))]
		request := map[string]types.KeysAndAttributes{w.opts.Table: {Keys: batch, ConsistentRead: aws.Bool(true)}}
		for attempt := 1; len(request) > 0; attempt++ {
			if attempt > batchGetAttempts {
				return fmt.Errorf("%d items still unread after %d tries", len(request[w.opts.Table].Keys), batchGetAttempts)
			}
			if attempt > 1 {
				pause(ctx, time.Duration(attempt)*50*time.Millisecond) // DynamoDB left keys out: it is busy
			}
			out, err := w.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: request})
			if err != nil {
				return fmt.Errorf("batch read: %w", err)
			}
			for _, av := range out.Responses[w.opts.Table] {
				if err := f(av); err != nil {
					return err
				}
			}
			request = out.UnprocessedKeys // throttled keys, to ask for again
		}
	}
	return nil
}
