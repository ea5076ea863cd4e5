package aws

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// Runs are listed through two write-sharded indexes: every write of a run
// item is also a write of each index it is in, and one index partition
// takes about 1,000 writes a second, so no partition is shared by all
// runs, nor by all runs of one workflow. runs-by-created-shard is
// partitioned by createdShard ("runs#<k>"), runs-by-workflow-shard by
// workflowShard ("<workflow>#<k>"), k the run's shard of listShards (a
// hash of its ID); both sort by created (write time, then ID). A listing
// queries a filter's listShards partitions in parallel and merges them
// newest first, reading on in a shard only as the merge reaches its end.
// The indexes project only what the filters read (status, attributes,
// workflow, expiresAt, beside the keys): the page's runs are then read
// from the table with their log heads, consistently, so an index entry
// costs one write unit whatever the run's input, and a listed run is as
// fresh as GetRun's.

// defaultPageSize is ListRuns' page size when the filter sets none.
const defaultPageSize = 100

// listShards is how many partitions each listing index spreads over. It
// may be raised, never lowered: a listing queries shards 0 to
// listShards-1, so runs already in the lower shards stay listed, while
// new runs spread over all of them.
const listShards = 16

func createdShardKey(runID string) string { return "runs#" + strconv.Itoa(shardOf(runID, listShards)) }

func workflowShardKey(workflow, runID string) string {
	return workflow + "#" + strconv.Itoa(shardOf(runID, listShards))
}

// listEntry is what a listing index holds of a run.
type listEntry struct {
	PK         string            `json:"pk"`
	Created    string            `json:"created"`
	Workflow   string            `json:"workflow"`
	Status     world.RunStatus   `json:"status"`
	Attributes map[string]string `json:"attributes"`
	ExpiresAt  int64             `json:"expiresAt"`
}

// shardReader reads one listing partition, newest first, a page at a time.
type shardReader struct {
	pages   *dynamodb.QueryPaginator
	entries []listEntry
	err     error
}

// fill reads the shard's next page if it has read all it holds.
func (r *shardReader) fill(ctx context.Context) {
	for len(r.entries) == 0 && r.err == nil && r.pages.HasMorePages() {
		out, err := r.pages.NextPage(ctx)
		if err != nil {
			r.err = err
			return
		}
		for _, av := range out.Items {
			var e listEntry
			if err := unmarshalItem(av, &e); err != nil {
				r.err = fmt.Errorf("decode listing entry: %w", err)
				return
			}
			r.entries = append(r.entries, e)
		}
	}
}

// ListRuns implements world.Store: the filter's listShards index
// partitions, queried in parallel and merged newest first, filtered by
// status and attributes as they are read (DynamoDB charges a
// FilterExpression's reads all the same), then one consistent
// BatchGetItem per 50 runs of the page for the runs and their log heads.
// Indexes are eventually consistent, so on AWS a run can take a moment to
// be listed.
//
// The cursor is the listing key of the page's last run: every shard goes
// on below it.
func (w *World) ListRuns(ctx context.Context, f world.RunFilter) (world.RunPage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	var below string
	if f.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(f.Cursor)
		if _, _, ok := strings.Cut(string(raw), "#"); err != nil || !ok {
			return world.RunPage{}, fmt.Errorf("list runs: bad cursor %q", f.Cursor)
		}
		below = string(raw)
	}
	// Each shard holds about 1/listShards of the page: its first read asks
	// for twice that, and the merge reads on where a shard runs out.
	perShard := int32(min(max(2*(limit+1)/listShards, 10), 1000))
	readers := make([]*shardReader, listShards)
	var wg sync.WaitGroup
	for k := range listShards {
		r, err := w.shardReader(f.Workflow, k, below, perShard)
		if err != nil {
			return world.RunPage{}, fmt.Errorf("list runs: %w", err)
		}
		readers[k] = r
		wg.Go(func() { r.fill(ctx) })
	}
	wg.Wait()
	var listed []listEntry
	more := false
	for {
		next := newest(ctx, readers)
		if next == nil {
			break
		}
		for _, r := range readers {
			if r.err != nil {
				return world.RunPage{}, fmt.Errorf("list runs: %w", r.err)
			}
		}
		e := next.entries[0]
		next.entries = next.entries[1:]
		if !world.MatchRun(world.Run{Workflow: e.Workflow, Status: e.Status, Attributes: e.Attributes}, f) || w.expired(e.ExpiresAt) {
			continue
		}
		if len(listed) == limit {
			more = true
			break
		}
		listed = append(listed, e)
	}
	for _, r := range readers {
		if r.err != nil {
			return world.RunPage{}, fmt.Errorf("list runs: %w", r.err)
		}
	}
	page, err := w.readListed(ctx, listed, f)
	if err != nil {
		return world.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	if more {
		page.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(listed[len(listed)-1].Created))
	}
	return page, nil
}

// shardReader returns the reader of shard k of the index the filter's
// workflow picks, for entries created before below (all if empty).
func (w *World) shardReader(workflow string, k int, below string, limit int32) (*shardReader, error) {
	index, part := indexCreated, expression.Key(attrCreatedShard).Equal(expression.Value("runs#"+strconv.Itoa(k)))
	if workflow != "" {
		index, part = indexWorkflow, expression.Key(attrWorkflowShard).Equal(expression.Value(workflow+"#"+strconv.Itoa(k)))
	}
	if below != "" {
		part = part.And(expression.Key(attrCreated).LessThan(expression.Value(below)))
	}
	cond, err := expression.NewBuilder().WithKeyCondition(part).Build()
	if err != nil {
		return nil, err
	}
	return &shardReader{pages: dynamodb.NewQueryPaginator(w.ddb, &dynamodb.QueryInput{
		TableName:                 &w.opts.Table,
		IndexName:                 aws.String(index),
		KeyConditionExpression:    cond.KeyCondition(),
		ExpressionAttributeNames:  cond.Names(),
		ExpressionAttributeValues: cond.Values(),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(limit),
	})}, nil
}

// newest returns the reader whose next entry is the newest of all, reading
// a shard's next page when the merge has taken all it read; nil when every
// shard is read out (or failed: the caller checks).
func newest(ctx context.Context, readers []*shardReader) *shardReader {
	var best *shardReader
	for _, r := range readers {
		r.fill(ctx)
		if r.err != nil {
			return nil
		}
		if len(r.entries) > 0 && (best == nil || r.entries[0].Created > best.entries[0].Created) {
			best = r
		}
	}
	return best
}

// maxListedPerBatch: a BatchGetItem takes 100 keys, a run item and a log
// head per run.
const maxListedPerBatch = maxBatchGet / 2

// readListed reads the listed runs and their log heads from the table, in
// order, and keeps those that still match the filter (an index lags the
// table).
func (w *World) readListed(ctx context.Context, listed []listEntry, f world.RunFilter) (world.RunPage, error) {
	items := map[string]map[string]types.AttributeValue{}
	heads := map[string]logHead{}
	for start := 0; start < len(listed); start += maxListedPerBatch {
		var keys []map[string]types.AttributeValue
		for _, e := range listed[start:min(start+maxListedPerBatch, len(listed))] {
			keys = append(keys, itemKeys{PK: e.PK, SK: skRun}.key(), itemKeys{PK: e.PK, SK: skLogHead}.key())
		}
		err := w.batchGet(ctx, keys, func(av map[string]types.AttributeValue) error {
			pk := stringAttr(av, attrPK)
			if !isItem(av, skLogHead) {
				items[pk] = av
				return nil
			}
			var head logHead
			if err := unmarshalItem(av, &head); err != nil {
				return fmt.Errorf("decode log head: %w", err)
			}
			heads[pk] = head
			return nil
		})
		if err != nil {
			return world.RunPage{}, err
		}
	}
	var page world.RunPage
	for _, e := range listed {
		av := items[e.PK]
		if av == nil || w.expired(expiresAt(av)) {
			continue // deleted since it was listed
		}
		run, err := w.runFromItem(ctx, av)
		if err != nil {
			return world.RunPage{}, err
		}
		if !world.MatchRun(run, f) {
			continue
		}
		run.LastSlot = lastSlot(heads[e.PK])
		page.Runs = append(page.Runs, run)
	}
	return page, nil
}

func stringAttr(av map[string]types.AttributeValue, name string) string {
	s, _ := av[name].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}
