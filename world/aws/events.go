package aws

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// AppendEvents implements world.Store. One transaction puts each event on
// condition that its slot is free, moves the log head on condition that it
// points at from and the run is not finished, and applies update to the
// run. A refusal is decided from the cancellation reasons and the head as
// it was, never by trying again.
func (w *World) AppendEvents(ctx context.Context, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	return w.appendEvents(ctx, "", runID, from, events, update, nil)
}

// AppendLeased implements world.Leaser: AppendEvents whose condition on the
// log head also checks that owner holds the run's lease, which the head
// carries. It costs what AppendEvents costs.
func (w *World) AppendLeased(ctx context.Context, owner, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	if owner == "" {
		return nil, fmt.Errorf("append to run %s: no lease owner: %w", runID, world.ErrLeaseLost)
	}
	return w.appendEvents(ctx, owner, runID, from, events, update, nil)
}

// appendEvents appends, under owner's lease unless owner is empty, and
// deletes the inbox messages folded.
func (w *World) appendEvents(ctx context.Context, owner, runID string, from int64, events []world.Event, update *world.RunUpdate, folded []string) ([]world.Event, error) {
	if from < 1 {
		return nil, fmt.Errorf("append to run %s: slot %d: slots start at 1", runID, from)
	}
	// Two items of the transaction are the log head and the run.
	room := maxTransactItems - 2 - len(folded)
	perItem := max(1, (len(events)+room-1)/room)
	if perItem > maxPacked {
		return nil, fmt.Errorf("append to run %s: %d events and %d inbox messages, at most %d fit one transaction", runID, len(events), len(folded), maxPacked*room)
	}
	items := newEventItems(runID, from, events, perItem)
	blobs := eventBlobs(items)
	var change *runChange
	if update != nil {
		change = &runChange{RunUpdate: *update}
		blobs = append(blobs, change.blobs()...)
	}
	keys, err := w.placeBlobs(ctx, "runs/"+runID, transactBudget, blobs)
	if err != nil {
		w.deleteObjects(ctx, keys)
		return nil, fmt.Errorf("append to run %s: %w", runID, err)
	}
	writes, err := w.appendItems(runID, owner, from, items, change)
	if err != nil {
		w.deleteObjects(ctx, keys)
		return nil, fmt.Errorf("append to run %s: %w", runID, err)
	}
	writes = append(writes, w.inboxDeletes(runID, folded)...)
	err = w.transact(ctx, writes)
	if reasons, ok := cancelReasons(err); ok {
		w.deleteObjects(ctx, keys)
		missed, err := w.appendRefused(ctx, owner, runID, from, len(items), reasons, err)
		if errors.Is(err, errNotRefused) && anyRefused(reasons, len(writes)-len(folded), len(writes)) {
			err = fmt.Errorf("append to run %s: %w", runID, world.ErrInboxChanged)
		}
		return missed, err
	}
	if err != nil {
		return nil, fmt.Errorf("append to run %s at slot %d: %w", runID, from, err)
	}
	return nil, nil
}

// runChange is a RunUpdate with its payloads' places in S3, if they went
// there.
type runChange struct {
	world.RunUpdate
	OutputRef, ErrorRef string
}

func (c *runChange) blobs() []blob {
	return []blob{
		{Data: (*[]byte)(&c.Output), Ref: &c.OutputRef, limit: runBlobLimit},
		{Data: (*[]byte)(&c.Error), Ref: &c.ErrorRef, limit: runBlobLimit},
	}
}

// appendItems returns the transaction of AppendEvents: the events, then the
// log head (checking owner's lease if owner is set), then the run if it
// changes.
func (w *World) appendItems(runID, owner string, from int64, events []eventItem, change *runChange) ([]types.TransactWriteItem, error) {
	// The write that finishes the run stamps the items it touches with
	// their expiry; ExpireRun stamps the rest.
	var expires int64
	if change != nil && change.Status.Terminal() {
		expires = w.runExpiry()
	}
	var writes []types.TransactWriteItem
	for i := range events {
		events[i].ExpiresAt = expires
		av, err := marshalItem(&events[i])
		if err != nil {
			return nil, err
		}
		writes = append(writes, w.conditionalPut(av))
	}

	n := 0
	for _, item := range events {
		n += 1 + len(item.Before)
	}
	next := expression.Set(expression.Name("next"), expression.Value(from+int64(n)))
	if change != nil && change.Status.Terminal() {
		next = next.Set(expression.Name("finished"), expression.Value(true))
	}
	if expires != 0 {
		next = next.Set(expression.Name(attrExpiresAt), expression.Value(expires))
	}
	switch {
	case change != nil && change.Status.Terminal():
		next = next.Remove(expression.Name(attrDue))
	case owner == "":
		next = w.setDue(next, runID, w.now()) // a message follows an outside write
	}
	cond := expression.And(
		expression.AttributeExists(expression.Name(attrPK)),
		expression.Name("next").Equal(expression.Value(from)),
		expression.Name("finished").Equal(expression.Value(false)),
	)
	if owner != "" {
		cond = cond.And(leaseHeldBy(owner))
	}
	headExpr, err := expression.NewBuilder().WithUpdate(next).WithCondition(cond).Build()
	if err != nil {
		return nil, err
	}
	writes = append(writes, types.TransactWriteItem{Update: &types.Update{
		TableName:                           &w.opts.Table,
		Key:                                 itemKeys{PK: runPK(runID), SK: skLogHead}.key(),
		UpdateExpression:                    headExpr.Update(),
		ConditionExpression:                 headExpr.Condition(),
		ExpressionAttributeNames:            headExpr.Names(),
		ExpressionAttributeValues:           headExpr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}})

	if change != nil {
		u := change.expression(time.Now())
		if expires != 0 {
			u = u.Set(expression.Name(attrExpiresAt), expression.Value(expires))
		}
		runExpr, err := expression.NewBuilder().WithUpdate(u).Build()
		if err != nil {
			return nil, err
		}
		writes = append(writes, types.TransactWriteItem{Update: &types.Update{
			TableName:                 &w.opts.Table,
			Key:                       itemKeys{PK: runPK(runID), SK: skRun}.key(),
			UpdateExpression:          runExpr.Update(),
			ExpressionAttributeNames:  runExpr.Names(),
			ExpressionAttributeValues: runExpr.Values(),
		}})
	}
	return writes, nil
}

// expression is world.ApplyUpdate as a DynamoDB update of the run item.
func (c *runChange) expression(now time.Time) expression.UpdateBuilder {
	u := expression.Set(expression.Name("updatedAt"), expression.Value(now))
	if c.Status != "" {
		u = u.Set(expression.Name("status"), expression.Value(c.Status))
	}
	setBlob := func(name, refName string, data []byte, ref string) {
		switch {
		case ref != "":
			u = u.Set(expression.Name(refName), expression.Value(ref)).Remove(expression.Name(name))
		case data != nil:
			u = u.Set(expression.Name(name), expression.Value(data)).Remove(expression.Name(refName))
		}
	}
	setBlob("output", "outputRef", c.Output, c.OutputRef)
	setBlob("error", "errorRef", c.Error, c.ErrorRef)
	for k, v := range c.Attributes {
		u = u.Set(expression.Name("attributes").AppendName(expression.NameNoDotSplit(k)), expression.Value(v))
	}
	return u
}

// appendRefused explains a cancelled append from the reasons of its items:
// events (0..n-1), then the log head as it was. A writer that lost its
// lease is told so first: whatever else happened, it must stop.
func (w *World) appendRefused(ctx context.Context, owner, runID string, from int64, n int, reasons []types.CancellationReason, err error) ([]world.Event, error) {
	headRefused, old := refused(reasons, n)
	if headRefused && old == nil {
		return nil, fmt.Errorf("append to run %s: %w", runID, world.ErrRunNotFound)
	}
	var head logHead
	if old != nil {
		if err := unmarshalItem(old, &head); err != nil {
			return nil, fmt.Errorf("append to run %s: decode log head: %w", runID, err)
		}
	}
	if headRefused && owner != "" && head.LeaseOwner != owner {
		return nil, fmt.Errorf("append to run %s: %w", runID, world.ErrLeaseLost)
	}
	slotTaken := headRefused && head.Next > from
	for i := range n {
		if r, _ := refused(reasons, i); r {
			slotTaken = true
		}
	}
	switch {
	case slotTaken:
		missed, err := w.Events(ctx, runID, from-1)
		if err != nil {
			return nil, err
		}
		return missed, fmt.Errorf("append to run %s at slot %d: %w", runID, from, world.ErrSlotTaken)
	case head.Finished:
		return nil, fmt.Errorf("append to run %s: %w", runID, world.ErrRunFinished)
	case headRefused:
		return nil, fmt.Errorf("append to run %s at slot %d: the log has %d events", runID, from, head.Next-1)
	}
	return nil, fmt.Errorf("append to run %s at slot %d: %w: %w", runID, from, errNotRefused, err)
}

// errNotRefused marks an append cancelled for a reason other than its
// events and log head: AppendFolded looks at its inbox deletes then.
var errNotRefused = errors.New("neither the events nor the log head refused")

// anyRefused reports whether a condition of the items from..to-1 failed.
func anyRefused(reasons []types.CancellationReason, from, to int) bool {
	for i := from; i < to; i++ {
		if r, _ := refused(reasons, i); r {
			return true
		}
	}
	return false
}

// Events implements world.Store with one consistent Query from slot
// after+1 through the log head, whose presence tells that the run exists.
func (w *World) Events(ctx context.Context, runID string, after int64) ([]world.Event, error) {
	after = max(after, 0)
	avs, err := w.queryRange(ctx, runPK(runID), eventSK(after+1), skLogHead)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	if len(avs) == 0 || !isItem(avs[len(avs)-1], skLogHead) || w.expired(expiresAt(avs[len(avs)-1])) {
		return nil, fmt.Errorf("events of run %s: %w", runID, world.ErrRunNotFound)
	}
	return w.decodeEvents(ctx, runID, after, avs[:len(avs)-1])
}

// queryRange reads the items of partition pk with sort keys from..to, in
// order, with strongly consistent reads.
func (w *World) queryRange(ctx context.Context, pk, from, to string) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	err := w.queryPages(ctx, pk, from, to, func(page []map[string]types.AttributeValue) error {
		items = append(items, page...)
		return nil
	})
	return items, err
}

// queryPages is queryRange a page (up to 1 MB) at a time.
func (w *World) queryPages(ctx context.Context, pk, from, to string, f func([]map[string]types.AttributeValue) error) error {
	cond, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(attrPK).Equal(expression.Value(pk)).
			And(expression.Key(attrSK).Between(expression.Value(from), expression.Value(to))),
	).Build()
	if err != nil {
		return err
	}
	pages := dynamodb.NewQueryPaginator(w.ddb, &dynamodb.QueryInput{
		TableName:                 &w.opts.Table,
		KeyConditionExpression:    cond.KeyCondition(),
		ExpressionAttributeNames:  cond.Names(),
		ExpressionAttributeValues: cond.Values(),
		ConsistentRead:            aws.Bool(true),
	})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		if err := f(out.Items); err != nil {
			return err
		}
	}
	return nil
}

// isItem reports whether av has sort key sk.
func isItem(av map[string]types.AttributeValue, sk string) bool {
	s, ok := av[attrSK].(*types.AttributeValueMemberS)
	return ok && s.Value == sk
}
