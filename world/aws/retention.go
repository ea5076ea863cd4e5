package aws

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

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
// partition, a BatchWriteItem per 25 events not yet stamped (each put
// again as it was, with expiresAt: events of a finished run never change),
// one UpdateItem per stream of the run's own, and one S3 CopyObject per
// object of the run (expireObjects). A run that has not finished, or is
// kept for ever, is left alone. Running it again costs the Query, the
// stream updates and the copies (which only move the objects' expiry a
// little later than their items').
func (w *World) ExpireRun(ctx context.Context, runID string, streams []string) error {
	avs, err := w.queryRange(ctx, runPK(runID), eventSK(1), skRun)
	if err != nil {
		return fmt.Errorf("expire run %s: %w", runID, err)
	}
	var head logHead
	var unstamped []ddbItem
	var objects []string
	for _, av := range avs {
		switch {
		case isItem(av, skLogHead):
			if err := unmarshalItem(av, &head); err != nil {
				return fmt.Errorf("expire run %s: decode log head: %w", runID, err)
			}
		case isItem(av, skRun):
			var run runItem
			if err := unmarshalItem(av, &run); err != nil {
				return fmt.Errorf("expire run %s: decode run: %w", runID, err)
			}
			objects = append(objects, run.InputRef, run.OutputRef, run.ErrorRef)
		default:
			var ev eventItem
			if err := unmarshalItem(av, &ev); err != nil {
				return fmt.Errorf("expire run %s: decode event: %w", runID, err)
			}
			objects = append(objects, ev.PayloadRef)
			for _, p := range ev.Before {
				objects = append(objects, p.PayloadRef)
			}
			if ev.ExpiresAt == 0 {
				unstamped = append(unstamped, av)
			}
		}
	}
	if !head.Finished || head.ExpiresAt == 0 {
		return nil // running, kept for ever, or gone already
	}
	for _, name := range streams {
		if !strings.HasPrefix(name, world.RunStreamPrefix(runID)) {
			continue // a reply's: CloseStream stamped it
		}
		object, err := w.stampStream(ctx, name, head.ExpiresAt)
		if err != nil {
			return fmt.Errorf("expire run %s: %w", runID, err)
		}
		objects = append(objects, object)
	}
	if err := w.expireObjects(ctx, objects); err != nil {
		return fmt.Errorf("expire run %s: %w", runID, err)
	}
	expires := &types.AttributeValueMemberN{Value: strconv.FormatInt(head.ExpiresAt, 10)}
	puts := make([]types.WriteRequest, len(unstamped))
	for i, av := range unstamped {
		av[attrExpiresAt] = expires
		puts[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	if err := w.batchWrite(ctx, puts); err != nil {
		return fmt.Errorf("expire run %s: %w", runID, err)
	}
	return nil
}

// stampStream sets the expiresAt of a stream's head, if it has one, and
// returns the head's compacted object.
func (w *World) stampStream(ctx context.Context, name string, expiresAt int64) (string, error) {
	held, refused, err := w.updateIf(ctx, itemKeys{PK: streamPK(name), SK: skChunkHead}.key(),
		expression.Set(expression.Name(attrExpiresAt), expression.Value(expiresAt)),
		expression.AttributeExists(expression.Name(attrPK)))
	if err != nil {
		return "", fmt.Errorf("stamp stream %s: %w", name, err)
	}
	var head streamHead
	if !refused {
		if err := unmarshalItem(held, &head); err != nil {
			return "", fmt.Errorf("stamp stream %s: %w", name, err)
		}
	}
	return head.Object, nil
}

// S3 objects expire through the bucket's lifecycle rules (Bootstrap and
// template.yaml), which select them by tag and count days from an object's
// creation. A reply's objects are tagged when uploaded: they live an hour
// or so. A run's objects cannot be: a run may outlive any retention, and
// an object tagged at upload would expire under it. So the run's end
// copies each of its objects onto itself with the tag, which makes the
// end the object's creation date.
const (
	tagExpiry      = "workflow-expiry"
	tagValueRun    = "run"
	tagValueReply  = "reply"
	tagExpiryRun   = tagExpiry + "=" + tagValueRun
	tagExpiryReply = tagExpiry + "=" + tagValueReply
)

// uploadTagging is the tagging of a new object: a reply stream's, whose
// keys are streams/<name>/… and blobs/streams/<name>/…, expire as replies.
func uploadTagging(key string) *string {
	name, ok := strings.CutPrefix(strings.TrimPrefix(key, "blobs/"), "streams/")
	if ok && !world.IsRunStream(name) {
		return aws.String(tagExpiryReply)
	}
	return nil
}

// expireObjects copies each named object onto itself, tagged to expire
// with a finished run. Empty names are skipped.
func (w *World) expireObjects(ctx context.Context, keys []string) error {
	for _, key := range keys {
		if key == "" {
			continue
		}
		_, err := w.s3.CopyObject(ctx, &s3.CopyObjectInput{
			Bucket:            &w.opts.Bucket,
			Key:               aws.String(key),
			CopySource:        aws.String((&url.URL{Path: w.opts.Bucket + "/" + key}).EscapedPath()),
			MetadataDirective: s3types.MetadataDirectiveReplace,
			TaggingDirective:  s3types.TaggingDirectiveReplace,
			Tagging:           aws.String(tagExpiryRun),
		})
		if err != nil {
			return fmt.Errorf("tag s3 object %s to expire: %w", key, err)
		}
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
