package aws

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// When a run is next due (world.Overdue) lives on its log head as due, in
// Unix milliseconds, beside dueShard, and the sparse, keys-only index
// runs-by-due holds exactly the heads that carry both: runs that are
// neither finished nor waiting only for a hook or a child. The check asks
// each shard's partition for the heads due before its cutoff (a Query of
// keys, in due order), then reads those heads (BatchGetItem) for their
// lease and last slot. Waiting and finished runs are not in the index, so
// a check costs dueShards Queries plus a read per overdue candidate,
// however many runs the table keeps.
//
// Only writes that set due touch the index: a run's creation, an outside
// append, the release of a lease, a re-queue, and the end that removes it;
// and a message delivered to the run's inbox, whose own item carries its
// delivery time as due until the fold deletes it (inbox.go). A run whose
// head has no due (it waits only for hooks) is due by its earliest such
// message.
// An invocation's own appends leave due alone, so a step's transaction
// writes the index nothing.

// dueShards spreads the index over partitions, since every release writes
// it: one partition key value takes at most 1,000 writes a second.
const dueShards = 16

// dueShard is a run's shard of the due index.
func dueShard(runID string) string { return "due#" + strconv.Itoa(shardOf(runID, dueShards)) }

// shardOf is a run's shard of n, by a hash of its ID: the same for every
// write of the run, spread evenly over runs.
func shardOf(runID string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(runID))
	return int(h.Sum32() % uint32(n))
}

// setDue adds to a log head's update that the run is due at at (zero:
// never, which takes it out of the due index).
func (w *World) setDue(u expression.UpdateBuilder, runID string, at time.Time) expression.UpdateBuilder {
	if at.IsZero() {
		return u.Remove(expression.Name(attrDue))
	}
	return u.Set(expression.Name(attrDue), expression.Value(at.UnixMilli())).
		Set(expression.Name(attrDueShard), expression.Value(dueShard(runID)))
}

// OverdueRuns implements world.Overdue: a Query of the due index per
// shard, concurrently, and one consistent BatchGetItem per 100 candidates.
func (w *World) OverdueRuns(ctx context.Context, before, now time.Time, limit int) ([]world.OverdueRun, error) {
	var (
		mu    sync.Mutex
		found []world.OverdueRun
		errs  = make([]error, dueShards)
		wg    sync.WaitGroup
	)
	for i := range dueShards {
		wg.Go(func() {
			due, err := w.dueBefore(ctx, "due#"+strconv.Itoa(i), before, limit)
			mu.Lock()
			found = append(found, due...)
			mu.Unlock()
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("overdue runs: %w", err)
		}
	}
	slices.SortFunc(found, func(a, b world.OverdueRun) int { return a.Due.Compare(b.Due) })
	seen := map[string]bool{} // a run's head and its inbox messages: the earliest
	found = slices.DeleteFunc(found, func(r world.OverdueRun) bool {
		dup := seen[r.RunID]
		seen[r.RunID] = true
		return dup
	})
	found = found[:min(len(found), limit)]
	ids := make([]string, len(found))
	at := make(map[string]*world.OverdueRun, len(found))
	for i := range found {
		ids[i] = found[i].RunID
		at[runPK(found[i].RunID)] = &found[i]
	}
	var overdue []world.OverdueRun
	err := w.readHeads(ctx, ids, func(head logHead) {
		r := at[head.PK]
		free := head.LeaseOwner == "" || head.LeaseUntil <= now.UnixMilli()
		due := head.Due
		if due == 0 && r != nil {
			// Due for nothing but the earliest message in its inbox: a run
			// that only waits for hooks, which the message's wake-up was to
			// move.
			due = r.Due.UnixMilli()
		}
		if r == nil || head.Finished || due == 0 || due >= before.UnixMilli() || !free {
			return // the index lags the table, or a live invocation holds the run
		}
		r.LastSlot, r.Due = lastSlot(head), time.UnixMilli(due)
		r.Requeued = head.Requeued != 0 && head.Requeued == r.LastSlot
		overdue = append(overdue, *r)
	})
	if err != nil {
		return nil, fmt.Errorf("overdue runs: %w", err)
	}
	slices.SortFunc(overdue, func(a, b world.OverdueRun) int { return a.Due.Compare(b.Due) })
	return overdue, nil
}

// dueBefore queries one shard of the due index for up to limit runs due
// before before, oldest first.
func (w *World) dueBefore(ctx context.Context, shard string, before time.Time, limit int) ([]world.OverdueRun, error) {
	cond, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(attrDueShard).Equal(expression.Value(shard)).
			And(expression.Key(attrDue).LessThan(expression.Value(before.UnixMilli()))),
	).Build()
	if err != nil {
		return nil, err
	}
	pages := dynamodb.NewQueryPaginator(w.ddb, &dynamodb.QueryInput{
		TableName:                 &w.opts.Table,
		IndexName:                 aws.String(indexDue),
		KeyConditionExpression:    cond.KeyCondition(),
		ExpressionAttributeNames:  cond.Names(),
		ExpressionAttributeValues: cond.Values(),
		Limit:                     aws.Int32(int32(min(limit, 1000))),
	})
	var due []world.OverdueRun
	for pages.HasMorePages() && len(due) < limit {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, av := range out.Items {
			var keys struct {
				PK  string `json:"pk"`
				Due int64  `json:"due"`
			}
			if err := unmarshalItem(av, &keys); err != nil {
				return nil, err
			}
			due = append(due, world.OverdueRun{RunID: strings.TrimPrefix(keys.PK, "run#"), Due: time.UnixMilli(keys.Due)})
		}
	}
	return due[:min(len(due), limit)], nil
}

// MarkRequeued implements world.Overdue with one conditional UpdateItem
// when the run's head holds the due time the check found. A run due by
// its inbox (its head says nothing is due: it waits for a hook) is marked
// only while a message delivered by then still waits there: a message
// withdrawn since (its resumer found the hook taken over) leaves a run
// that is rightly idle, and marking it due would have the next check
// fail it as stuck. That is a refused UpdateItem, a Query of the inbox
// and a TransactWriteItems of the mark and a check that the message is
// still there.
func (w *World) MarkRequeued(ctx context.Context, run world.OverdueRun, now time.Time) error {
	update := w.setDue(expression.Set(expression.Name("requeued"), expression.Value(run.LastSlot)), run.RunID, now)
	unmoved := expression.And(
		expression.Name("next").Equal(expression.Value(run.LastSlot+1)),
		expression.Name("finished").Equal(expression.Value(false)),
		expression.Or(
			expression.AttributeNotExists(expression.Name("leaseOwner")),
			expression.Name("leaseUntil").LessThanEqual(expression.Value(now.UnixMilli())),
		),
	)
	found, refused, err := w.updateIf(ctx, w.logHeadKey(run.RunID), update,
		unmoved.And(expression.Name(attrDue).Equal(expression.Value(run.Due.UnixMilli()))))
	switch {
	case err != nil:
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, err)
	case refused && found == nil:
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, world.ErrRunNotFound)
	case refused && found[attrDue] == nil:
		return w.markRequeuedByInbox(ctx, run, update, unmoved.And(expression.AttributeNotExists(expression.Name(attrDue))))
	case refused:
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, world.ErrNotOverdue)
	}
	return nil
}

// markRequeuedByInbox marks a run due by its inbox, in one transaction
// with a check that a message delivered by the due time found still
// waits.
func (w *World) markRequeuedByInbox(ctx context.Context, run world.OverdueRun, update expression.UpdateBuilder, cond expression.ConditionBuilder) error {
	avs, err := w.queryRange(ctx, runPK(run.RunID), skInboxPrefix, "in$")
	if err != nil {
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, err)
	}
	var waiting ddbItem
	for _, av := range avs {
		var msg struct {
			Due int64 `json:"due"`
		}
		if unmarshalItem(av, &msg) == nil && msg.Due <= run.Due.UnixMilli() {
			waiting = av
			break
		}
	}
	if waiting == nil {
		return fmt.Errorf("mark run %s re-queued: no message waits since it was due: %w", run.RunID, world.ErrNotOverdue)
	}
	headExpr, err := expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
	if err != nil {
		return err
	}
	there := mustBuild(expression.NewBuilder().WithCondition(expression.AttributeExists(expression.Name(attrPK))))
	err = w.transact(ctx, []types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                 &w.opts.Table,
			Key:                       w.logHeadKey(run.RunID),
			UpdateExpression:          headExpr.Update(),
			ConditionExpression:       headExpr.Condition(),
			ExpressionAttributeNames:  headExpr.Names(),
			ExpressionAttributeValues: headExpr.Values(),
		}},
		{ConditionCheck: &types.ConditionCheck{
			TableName:                 &w.opts.Table,
			Key:                       itemKeys{PK: runPK(run.RunID), SK: stringAttr(waiting, attrSK)}.key(),
			ConditionExpression:       there.Condition(),
			ExpressionAttributeNames:  there.Names(),
			ExpressionAttributeValues: there.Values(),
		}},
	})
	if _, cancelled := cancelReasons(err); cancelled {
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, world.ErrNotOverdue)
	}
	if err != nil {
		return fmt.Errorf("mark run %s re-queued: %w", run.RunID, err)
	}
	return nil
}
