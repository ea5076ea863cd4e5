package aws

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// Retention (doc.go has the design and its cost). A finished run's items
// carry the TTL attribute expiresAt: the terminal append stamps the run,
// its log head and the events it writes; ExpireRun, which the engine calls
// after the end is written, stamps the older events and the run's stream
// heads. Nothing of a running run carries it. A closed reply stream's head
// is stamped by CloseStream.

var _ world.Expirer = (*World)(nil)

// retentionFromEnv reads WORKFLOW_RETENTION_DAYS: unset is the default, 0
// keeps runs for ever.
func retentionFromEnv() (time.Duration, error) {
	v, ok := os.LookupEnv("WORKFLOW_RETENTION_DAYS")
	if !ok || v == "" {
		return 0, nil
	}
	days, err := strconv.Atoi(v)
	switch {
	case err != nil || days < 0:
		return 0, fmt.Errorf("WORKFLOW_RETENTION_DAYS=%q: want a whole number of days, 0 to keep runs for ever", v)
	case days == 0:
		return world.KeepForever, nil
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

// runExpiry is the expiresAt of a run finishing now, 0 if runs are kept
// for ever. TTL has one-second resolution: round up.
func (w *World) runExpiry() int64 {
	if w.retention == world.KeepForever {
		return 0
	}
	return w.now().Add(w.retention + time.Second - 1).Unix()
}

// expired reports whether an item stamped expiresAt is past it, which
// readers check: TTL deletes it only some time after.
func (w *World) expired(expiresAt int64) bool {
	return expiresAt != 0 && expiresAt <= w.now().Unix()
}

// expiresAt reads an item's expiresAt, 0 if it has none.
func expiresAt(av map[string]types.AttributeValue) int64 {
	n, ok := av[attrExpiresAt].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, _ := strconv.ParseInt(n.Value, 10, 64)
	return v
}

// ExpireRun implements world.Expirer: one consistent Query of the run's
// log, a BatchWriteItem per 25 events not yet stamped (each put again as it
// was, with expiresAt: events of a finished run never change), and one
// UpdateItem per stream of the run's own. A run that has not finished, or
// is kept for ever, is left alone. Running it again costs the Query and
// the stream updates.
func (w *World) ExpireRun(ctx context.Context, runID string, streams []string) error {
	avs, err := w.queryRange(ctx, runPK(runID), eventSK(1), skLogHead)
	if err != nil {
		return fmt.Errorf("expire run %s: %w", runID, err)
	}
	if len(avs) == 0 || !isItem(avs[len(avs)-1], skLogHead) {
		return nil // gone already
	}
	var head logHead
	if err := unmarshalItem(avs[len(avs)-1], &head); err != nil {
		return fmt.Errorf("expire run %s: decode log head: %w", runID, err)
	}
	if !head.Finished || head.ExpiresAt == 0 {
		return nil
	}
	expires := &types.AttributeValueMemberN{Value: strconv.FormatInt(head.ExpiresAt, 10)}
	var puts []types.WriteRequest
	for _, av := range avs[:len(avs)-1] {
		if _, ok := av[attrExpiresAt]; !ok {
			av[attrExpiresAt] = expires
			puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		}
	}
	if err := w.batchWrite(ctx, puts); err != nil {
		return fmt.Errorf("expire run %s: %w", runID, err)
	}
	for _, name := range streams {
		if !strings.HasPrefix(name, world.RunStreamPrefix(runID)) {
			continue // a reply's: CloseStream stamped it
		}
		if err := w.stampStream(ctx, name, head.ExpiresAt); err != nil {
			return fmt.Errorf("expire run %s: %w", runID, err)
		}
	}
	return nil
}

// stampStream sets the expiresAt of a stream's head, if it has one.
func (w *World) stampStream(ctx context.Context, name string, expiresAt int64) error {
	_, _, err := w.updateIf(ctx, itemKeys{PK: streamPK(name), SK: skChunkHead}.key(),
		expression.Set(expression.Name(attrExpiresAt), expression.Value(expiresAt)),
		expression.AttributeExists(expression.Name(attrPK)))
	if err != nil {
		return fmt.Errorf("stamp stream %s: %w", name, err)
	}
	return nil
}

// batchWrite sends requests in BatchWriteItems of up to 25, sending again
// what DynamoDB leaves unprocessed (it does so under throttling).
func (w *World) batchWrite(ctx context.Context, requests []types.WriteRequest) error {
	for len(requests) > 0 {
		n := min(len(requests), batchWriteMax)
		pending := requests[:n]
		requests = requests[n:]
		for len(pending) > 0 {
			out, err := w.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems: map[string][]types.WriteRequest{w.opts.Table: pending},
			})
			if err != nil {
				return err
			}
			if pending = out.UnprocessedItems[w.opts.Table]; len(pending) > 0 {
				pause(ctx, 100*time.Millisecond)
			}
		}
	}
	return nil
}
