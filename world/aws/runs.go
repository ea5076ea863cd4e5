package aws

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

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
		itemKeys:     itemKeys{PK: runPK(run.ID), SK: skRun},
		CreatedShard: createdShardKey(run.ID),
		Created:      listingKey(time.Now(), run.ID),
		Run:          run,
	}
	if run.Workflow != "" {
		item.WorkflowShard = workflowShardKey(run.Workflow, run.ID)
	}
	events := newEventItems(run.ID, 1, first, 1)
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
