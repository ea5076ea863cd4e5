package aws

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// Flow control (world.Limiter). A partition (a workflow and a start's key)
// is one item collection: its head counts the slots held and the runs
// waiting and keeps the rate window; a holder item per run with a slot;
// a waiter item per queued run, sorted by the run's creation time and ID,
// so the queue's front is one Query of one item. Every change is a
// transaction that conditions on the head, so admissions, queueings and
// releases of one partition are serialised by DynamoDB, and the run's
// creation is in the same transaction as its slot or its place.

const (
	skLimitHead = "head"
	skHeld      = "held#"
	skWait      = "wait#"
	// limitAttempts bounds the rounds of a start or a release that lose
	// to other writers of the partition; each round follows a change.
	limitAttempts = 20
)

// limitPK names a partition's items. The workflow is quoted, so no pair
// of workflow and key names another's partition.
func limitPK(workflow, key string) string { return "limit#" + strconv.Quote(workflow) + "#" + key }

func waitSK(run world.Run) string { return skWait + listingKey(run.CreatedAt, run.ID) }

// limitHead is a partition's head item.
type limitHead struct {
	itemKeys
	Held    int    `json:"held"`
	Waiting int    `json:"waiting"`
	Win     *int64 `json:"win,omitempty"` // the rate window (world.RateWindow)
	Count   int    `json:"count,omitempty"`
}

func (h limitHead) rate() world.RateWindow {
	if h.Win == nil {
		return world.RateWindow{}
	}
	return world.RateWindow{Index: *h.Win, Count: h.Count}
}

// waiterItem is a queued run's place: its first message, queued when the
// run is let in.
type waiterItem struct {
	itemKeys
	RunID     string    `json:"runId"`
	DeliverAt time.Time `json:"deliverAt,omitzero"`
	DedupKey  string    `json:"dedupKey,omitempty"`
	Trace     string    `json:"trace,omitempty"`
}

type holderItem struct {
	itemKeys
	RunID string `json:"runId"`
}

// StartLimited implements world.Limiter. Without a rate it reads nothing
// first: it tries to take a slot (or, if this World's last start in the
// partition was queued, to queue) and, refused, the other, and back while
// the partition changes under it; a wrong guess costs one refused
// transaction. With a
// rate it reads the head first (one consistent GetItem), since the
// window's count is a condition.
func (w *World) StartLimited(ctx context.Context, run world.Run, first []world.Event, msg world.Message, limit world.Limit) (world.Run, error) {
	pk := limitPK(limit.Workflow, limit.Key)
	_, full := w.fullPartitions.Load(pk)
	takeOver, queue := limit.From != "", full
	for attempt := 1; ; attempt++ {
		var head limitHead
		if limit.Rate > 0 && !takeOver {
			var err error
			if head, err = w.limitHead(ctx, pk); err != nil {
				return world.Run{}, fmt.Errorf("start run %s: %w", run.ID, err)
			}
			queue = head.Waiting > 0 || !limit.Admits(head.Held)
		}
		plan, err := w.planStart(pk, run, msg, limit, head, takeOver, queue)
		if err != nil {
			return world.Run{}, fmt.Errorf("start run %s: %w", run.ID, err)
		}
		created, err := w.createRun(ctx, plan.run, first, plan.due, plan.items)
		if errors.Is(err, world.ErrRunExists) {
			if st := created.Status; !st.Terminal() && st != world.StatusQueued {
				return created, errors.Join(err, w.Enqueue(ctx, msg))
			}
			return created, err
		}
		reasons, lost := cancelReasons(err)
		switch {
		case err == nil && plan.run.Status == world.StatusQueued:
			w.fullPartitions.Store(pk, true)
			return created, nil
		case err == nil:
			w.fullPartitions.Delete(pk)
			return created, w.Enqueue(ctx, firstMessage(plan.msg))
		case !lost || attempt == limitAttempts:
			return world.Run{}, fmt.Errorf("start run %s: %w", run.ID, err)
		}
		if refusedAny(reasons, len(first)+2) { // the partition's items follow the run, its head and events
			switch {
			case takeOver:
				takeOver = false // From holds no slot: start as any run
			case limit.Rate == 0:
				queue = !queue // the partition filled or freed
			}
			continue
		}
		return world.Run{}, fmt.Errorf("start run %s: %w", run.ID, err)
	}
}

// startPlan is one attempt of StartLimited: the run as stored, when it is
// due, the partition's items of the transaction, and its message.
type startPlan struct {
	run   world.Run
	due   time.Time
	items []types.TransactWriteItem
	msg   world.Message
}

func (w *World) planStart(pk string, run world.Run, msg world.Message, limit world.Limit, head limitHead, takeOver, queue bool) (startPlan, error) {
	now := w.now()
	plan := startPlan{run: run, due: now, msg: msg}
	holder, err := marshalItem(holderItem{itemKeys: itemKeys{PK: pk, SK: skHeld + run.ID}, RunID: run.ID})
	if err != nil {
		return plan, err
	}
	if takeOver {
		plan.items = []types.TransactWriteItem{w.deleteExisting(itemKeys{PK: pk, SK: skHeld + limit.From}), w.conditionalPut(holder)}
		return plan, nil
	}
	rate, at := limit.PlaceStart(head.rate(), now)
	var cond *expression.ConditionBuilder
	and := func(c expression.ConditionBuilder) {
		if cond != nil {
			c = cond.And(c)
		}
		cond = &c
	}
	if limit.Rate > 0 {
		if head.Win == nil {
			and(expression.AttributeNotExists(expression.Name("win")))
		} else {
			and(expression.Name("win").Equal(expression.Value(*head.Win)).And(expression.Name("count").Equal(expression.Value(head.Count))))
		}
	}
	update := expression.Add(expression.Name("held"), expression.Value(1)).Add(expression.Name("waiting"), expression.Value(0))
	if queue {
		update = expression.Add(expression.Name("waiting"), expression.Value(1))
	}
	if rate != head.rate() {
		update = update.Set(expression.Name("win"), expression.Value(rate.Index)).Set(expression.Name("count"), expression.Value(rate.Count))
	}
	if queue {
		and(expression.Name("held").GreaterThanEqual(expression.Value(limit.Concurrency)).Or(expression.Name("waiting").GreaterThan(expression.Value(0))))
		place, err := marshalItem(waiterItem{itemKeys: itemKeys{PK: pk, SK: waitSK(run)}, RunID: run.ID, DeliverAt: at, DedupKey: msg.DedupKey, Trace: msg.Trace})
		if err != nil {
			return plan, err
		}
		headItem, err := w.limitUpdate(pk, update, cond)
		plan.run.Status, plan.due, plan.items = world.StatusQueued, time.Time{}, []types.TransactWriteItem{headItem, w.conditionalPut(place)}
		return plan, err
	}
	if limit.Concurrency > 0 {
		and(expression.AttributeNotExists(expression.Name(attrPK)).Or(
			expression.Name("held").LessThan(expression.Value(limit.Concurrency)).And(expression.Name("waiting").Equal(expression.Value(0)))))
	}
	headItem, err := w.limitUpdate(pk, update, cond)
	if !at.IsZero() {
		plan.due, plan.msg.DeliverAt = at, at
	}
	plan.items = []types.TransactWriteItem{headItem, w.conditionalPut(holder)}
	return plan, err
}

// ReleaseSlot implements world.Limiter: a Query for the partition's front
// and one transaction, then the admitted run's message. A crash between
// the two leaves that run pending and due, for the stuck-run check.
func (w *World) ReleaseSlot(ctx context.Context, run world.Run, key string) error {
	pk := limitPK(run.Workflow, key)
	holder := itemKeys{PK: pk, SK: skHeld + run.ID}
	for attempt := 1; attempt <= limitAttempts; attempt++ {
		next, err := w.queueFront(ctx, pk)
		if err != nil {
			return fmt.Errorf("release the slot of run %s: %w", run.ID, err)
		}
		if next != nil && next.RunID == run.ID { // the queue's front run, cancelled
			_, err := w.removeWaiter(ctx, pk, next.SK)
			return err
		}
		items, err := w.releaseItems(pk, holder, next)
		if err != nil {
			return fmt.Errorf("release the slot of run %s: %w", run.ID, err)
		}
		err = w.transact(ctx, items)
		reasons, lost := cancelReasons(err)
		switch {
		case err == nil && next == nil:
			return nil
		case err == nil:
			return w.Enqueue(ctx, firstMessage(world.Message{RunID: next.RunID, DeliverAt: next.DeliverAt, DedupKey: next.DedupKey, Trace: next.Trace}))
		case !lost:
			return fmt.Errorf("release the slot of run %s: %w", run.ID, err)
		case refusedItem(reasons, 0): // it holds no slot: a queued run leaves its place
			_, err := w.removeWaiter(ctx, pk, waitSK(run))
			return err
		case next != nil && refusedItem(reasons, 3): // the front run no longer waits (cancelled)
			if _, err := w.removeWaiter(ctx, pk, next.SK); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("release the slot of run %s: the partition kept changing for %d rounds", run.ID, limitAttempts)
}

// releaseItems is the transaction that frees holder's slot: with no run
// waiting, the head's count goes down (on condition that none waits);
// otherwise the slot passes to next, made pending and due now.
func (w *World) releaseItems(pk string, holder itemKeys, next *waiterItem) ([]types.TransactWriteItem, error) {
	free := w.deleteExisting(holder)
	if next == nil {
		none := expression.Name("waiting").Equal(expression.Value(0))
		head, err := w.limitUpdate(pk, expression.Add(expression.Name("held"), expression.Value(-1)), &none)
		return []types.TransactWriteItem{free, head}, err
	}
	now := w.now()
	passed, err := marshalItem(holderItem{itemKeys: itemKeys{PK: pk, SK: skHeld + next.RunID}, RunID: next.RunID})
	if err != nil {
		return nil, err
	}
	stillQueued := expression.Name("status").Equal(expression.Value(world.StatusQueued))
	pending, err := w.updateItem(itemKeys{PK: runPK(next.RunID), SK: skRun},
		expression.Set(expression.Name("status"), expression.Value(world.StatusPending)).Set(expression.Name("updatedAt"), expression.Value(now)), &stillQueued)
	if err != nil {
		return nil, err
	}
	exists := expression.AttributeExists(expression.Name(attrPK))
	due, err := w.updateItem(itemKeys{PK: runPK(next.RunID), SK: skLogHead},
		w.setDue(expression.UpdateBuilder{}, next.RunID, world.DueAt(next.DeliverAt, now)), &exists)
	if err != nil {
		return nil, err
	}
	head, err := w.limitUpdate(pk, expression.Add(expression.Name("waiting"), expression.Value(-1)), nil)
	return []types.TransactWriteItem{free, w.deleteExisting(next.itemKeys), w.conditionalPut(passed), pending, due, head}, err
}

// removeWaiter takes a place out of a partition's queue, if it is there.
func (w *World) removeWaiter(ctx context.Context, pk, sk string) (bool, error) {
	head, err := w.limitUpdate(pk, expression.Add(expression.Name("waiting"), expression.Value(-1)), nil)
	if err != nil {
		return false, err
	}
	err = w.transact(ctx, []types.TransactWriteItem{w.deleteExisting(itemKeys{PK: pk, SK: sk}), head})
	if reasons, ok := cancelReasons(err); ok && refusedItem(reasons, 0) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("leave the queue of %s: %w", pk, err)
	}
	return true, nil
}

// queueFront returns the partition's oldest waiting run, nil if none.
func (w *World) queueFront(ctx context.Context, pk string) (*waiterItem, error) {
	cond, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(attrPK).Equal(expression.Value(pk)).And(expression.Key(attrSK).BeginsWith(skWait))).Build()
	if err != nil {
		return nil, err
	}
	out, err := w.ddb.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &w.opts.Table,
		KeyConditionExpression:    cond.KeyCondition(),
		ExpressionAttributeNames:  cond.Names(),
		ExpressionAttributeValues: cond.Values(),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(1),
	})
	if err != nil || len(out.Items) == 0 {
		return nil, err
	}
	var front waiterItem
	if err := unmarshalItem(out.Items[0], &front); err != nil {
		return nil, fmt.Errorf("decode the front of %s: %w", pk, err)
	}
	return &front, nil
}

// limitHead reads a partition's head (zero if it has none yet).
func (w *World) limitHead(ctx context.Context, pk string) (limitHead, error) {
	out, err := w.ddb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &w.opts.Table,
		Key:            itemKeys{PK: pk, SK: skLimitHead}.key(),
		ConsistentRead: aws.Bool(true),
	})
	var head limitHead
	if err == nil && out.Item != nil {
		err = unmarshalItem(out.Item, &head)
	}
	if err != nil {
		return head, fmt.Errorf("read the head of %s: %w", pk, err)
	}
	return head, nil
}

func (w *World) limitUpdate(pk string, u expression.UpdateBuilder, cond *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	return w.updateItem(itemKeys{PK: pk, SK: skLimitHead}, u, cond)
}

// updateItem is an Update of a transaction, on condition cond if set.
func (w *World) updateItem(key itemKeys, u expression.UpdateBuilder, cond *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	b := expression.NewBuilder().WithUpdate(u)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	e, err := b.Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 &w.opts.Table,
		Key:                       key.key(),
		UpdateExpression:          e.Update(),
		ConditionExpression:       e.Condition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	}}, nil
}

var mustExist = mustBuild(expression.NewBuilder().WithCondition(expression.AttributeExists(expression.Name(attrPK))))

// deleteExisting is a Delete of a transaction that only succeeds if the
// item is there.
func (w *World) deleteExisting(key itemKeys) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{
		TableName:                 &w.opts.Table,
		Key:                       key.key(),
		ConditionExpression:       mustExist.Condition(),
		ExpressionAttributeNames:  mustExist.Names(),
		ExpressionAttributeValues: mustExist.Values(),
	}}
}

// refusedAny reports whether a condition of an item at from or later
// failed.
func refusedAny(reasons []types.CancellationReason, from int) bool {
	for i := from; i < len(reasons); i++ {
		if no, _ := refused(reasons, i); no {
			return true
		}
	}
	return false
}

func refusedItem(reasons []types.CancellationReason, i int) bool {
	no, _ := refused(reasons, i)
	return no
}

// firstMessage is a run's first message as the run's admission sends it:
// without its DedupKey when it is due now, as StartRun sends it (no other
// message of the key can be waiting, and the marker would cost three
// writes); with it when a rate holds it back, so that a retried Start,
// which queues the key's message for now, is dropped instead of starting
// the run before its window.
func firstMessage(msg world.Message) world.Message {
	if msg.DeliverAt.IsZero() {
		msg.DedupKey = ""
	}
	return msg
}
