package aws

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// defaultPageSize is ListRuns' page size when the filter sets none.
const defaultPageSize = 100

// CreateRun implements world.Store: one transaction puts the run, its log
// head and its first events, each on condition that it is new.
func (w *World) CreateRun(ctx context.Context, run world.Run, first []world.Event) (world.Run, error) {
	var due time.Time
	if !run.Status.Terminal() {
		due = w.now() // its first message follows
	}
	created, err := w.createRun(ctx, run, first, due, nil)
	if _, ok := cancelReasons(err); ok {
		return world.Run{}, fmt.Errorf("create run %s: %w", run.ID, err)
	}
	return created, err
}

// createRun is CreateRun with the run due at due (zero: never) and extra
// items in its transaction (limits.go). A refusal of an extra item is
// returned as the transaction's cancellation, for the caller to read.
func (w *World) createRun(ctx context.Context, run world.Run, first []world.Event, due time.Time, extra []types.TransactWriteItem) (world.Run, error) {
	// Two items of the transaction are the run and its log head.
	if limit := maxTransactItems - 2 - len(extra); len(first) > limit {
		return world.Run{}, fmt.Errorf("create run %s: %d first events, at most %d fit one transaction", run.ID, len(first), limit)
	}
	item := runItem{
		itemKeys: itemKeys{PK: runPK(run.ID), SK: skRun},
		ListAll:  listAllValue,
		Created:  listingKey(time.Now(), run.ID),
		Run:      run,
	}
	events := newEventItems(run.ID, 1, first)
	blobs := append(eventBlobs(events), item.blobs()...)
	keys, err := w.placeBlobs(ctx, "runs/"+run.ID, transactBudget, blobs)
	if err != nil {
		w.deleteObjects(ctx, keys)
		return world.Run{}, fmt.Errorf("create run %s: %w", run.ID, err)
	}
	items, err := w.createRunItems(&item, events, due)
	if err != nil {
		w.deleteObjects(ctx, keys)
		return world.Run{}, fmt.Errorf("create run %s: %w", run.ID, err)
	}
	err = w.transact(ctx, append(items, extra...))
	if reasons, ok := cancelReasons(err); ok {
		w.deleteObjects(ctx, keys)
		if exists, _ := refused(reasons, 0); exists {
			existing, err := w.GetRun(ctx, run.ID)
			if err != nil {
				return world.Run{}, err
			}
			return existing, fmt.Errorf("create run %s: %w", run.ID, world.ErrRunExists)
		}
		return world.Run{}, err
	}
	if err != nil {
		return world.Run{}, fmt.Errorf("create run %s: %w", run.ID, err)
	}
	run.Attributes = maps.Clone(run.Attributes)
	run.LastSlot = int64(len(first))
	return run, nil
}

// createRunItems returns the transaction of CreateRun: the run first (its
// refusal means the run exists), then the log head, then the events.
func (w *World) createRunItems(item *runItem, events []eventItem, due time.Time) ([]types.TransactWriteItem, error) {
	runAV, err := marshalRun(item)
	if err != nil {
		return nil, err
	}
	head := logHead{
		itemKeys: itemKeys{PK: item.PK, SK: skLogHead},
		Next:     int64(len(events)) + 1,
		Finished: item.Status.Terminal(),
	}
	if !due.IsZero() {
		head.DueShard, head.Due = dueShard(item.ID), due.UnixMilli()
	}
	headAV, err := marshalItem(head)
	if err != nil {
		return nil, err
	}
	items := []types.TransactWriteItem{w.conditionalPut(runAV), w.conditionalPut(headAV)}
	for i := range events {
		av, err := marshalItem(&events[i])
		if err != nil {
			return nil, err
		}
		items = append(items, w.conditionalPut(av))
	}
	return items, nil
}

// blobs returns the run's payloads for placeBlobs.
func (r *runItem) blobs() []blob {
	return []blob{
		{Data: (*[]byte)(&r.Input), Ref: &r.InputRef, limit: runBlobLimit},
		{Data: (*[]byte)(&r.Output), Ref: &r.OutputRef, limit: runBlobLimit},
		{Data: (*[]byte)(&r.Error), Ref: &r.ErrorRef, limit: runBlobLimit},
	}
}

// marshalRun marshals a run item. Two attributes need care: an empty
// Workflow must be absent, as an index key cannot be empty, and Attributes
// must be present even when empty, so that updates can set keys inside it.
func marshalRun(item *runItem) (map[string]types.AttributeValue, error) {
	av, err := marshalItem(item)
	if err != nil {
		return nil, err
	}
	if item.Workflow == "" {
		delete(av, attrWorkflow)
	}
	attrs, err := attributevalue.Marshal(item.Attributes)
	if item.Attributes == nil {
		attrs, err = attributevalue.Marshal(map[string]string{})
	}
	if err != nil {
		return nil, err
	}
	av["attributes"] = attrs
	return av, nil
}

// runFromItem decodes a run item and fetches the payloads it keeps in S3.
func (w *World) runFromItem(ctx context.Context, av map[string]types.AttributeValue) (world.Run, error) {
	item, err := decodeRun(av)
	if err != nil {
		return world.Run{}, err
	}
	return w.loadRun(ctx, &item)
}

func decodeRun(av map[string]types.AttributeValue) (runItem, error) {
	var item runItem
	if err := unmarshalItem(av, &item); err != nil {
		return runItem{}, fmt.Errorf("decode run item %v: %w", av[attrPK], err)
	}
	return item, nil
}

// loadRun fetches the payloads a run item keeps in S3.
func (w *World) loadRun(ctx context.Context, item *runItem) (world.Run, error) {
	for _, b := range item.blobs() {
		if err := w.loadBlob(ctx, *b.Ref, b.Data); err != nil {
			return world.Run{}, fmt.Errorf("run %s: %w", item.ID, err)
		}
	}
	return item.Run, nil
}

// ListRuns implements world.Store. It queries the index of one workflow's
// runs if the filter names a workflow, else the index of all runs, and
// filters status and attributes as it reads: DynamoDB charges a
// FilterExpression's reads all the same. Indexes are eventually consistent,
// so on AWS a run can take a moment to be listed.
//
// The cursor is the listing key of the page's last run.
func (w *World) ListRuns(ctx context.Context, f world.RunFilter) (world.RunPage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	index, partAttr, partValue := indexAll, attrListAll, listAllValue
	if f.Workflow != "" {
		index, partAttr, partValue = indexWorkflow, attrWorkflow, f.Workflow
	}
	keyCond, err := expression.NewBuilder().
		WithKeyCondition(expression.Key(partAttr).Equal(expression.Value(partValue))).Build()
	if err != nil {
		return world.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 &w.opts.Table,
		IndexName:                 aws.String(index),
		KeyConditionExpression:    keyCond.KeyCondition(),
		ExpressionAttributeNames:  keyCond.Names(),
		ExpressionAttributeValues: keyCond.Values(),
		ScanIndexForward:          aws.Bool(false),
		// One more than the page tells whether a next page exists; filters
		// that skip runs make the paginator read on.
		Limit: aws.Int32(int32(limit + 1)),
	}
	if f.Cursor != "" {
		if in.ExclusiveStartKey, err = cursorKey(f.Cursor, partAttr, partValue); err != nil {
			return world.RunPage{}, err
		}
	}
	var page world.RunPage
	var last string
	pages := dynamodb.NewQueryPaginator(w.ddb, in)
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return world.RunPage{}, fmt.Errorf("list runs: %w", err)
		}
		for _, av := range out.Items {
			item, err := decodeRun(av)
			if err != nil {
				return world.RunPage{}, err
			}
			if !world.MatchRun(item.Run, f) || w.expired(item.ExpiresAt) {
				continue
			}
			if len(page.Runs) == limit {
				page.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(last))
				return page, w.setLastSlots(ctx, page.Runs)
			}
			run, err := w.loadRun(ctx, &item)
			if err != nil {
				return world.RunPage{}, err
			}
			page.Runs = append(page.Runs, run)
			last = item.Created
		}
	}
	return page, w.setLastSlots(ctx, page.Runs)
}

// cursorKey turns a cursor back into the index key to continue after: the
// listing key holds the run ID, which gives the table key.
func cursorKey(cursor, partAttr, partValue string) (map[string]types.AttributeValue, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	created := string(raw)
	_, id, ok := strings.Cut(created, "#")
	if err != nil || !ok {
		return nil, fmt.Errorf("list runs: bad cursor %q", cursor)
	}
	key := itemKeys{PK: runPK(id), SK: skRun}.key()
	key[attrCreated] = &types.AttributeValueMemberS{Value: created}
	key[partAttr] = &types.AttributeValueMemberS{Value: partValue}
	return key, nil
}
