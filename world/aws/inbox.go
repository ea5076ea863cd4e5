package aws

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// A run's inbox is one item per message in the run's own partition, under
// "in#<id>": a delivery is a conditional PutItem that no other delivery
// contends with (a transaction with a condition on the log head would
// make concurrent deliveries cancel each other). "in#" sorts after
// "ev#head" and before "run", so GetRun's one Query counts the waiting
// messages, and ExpireRun's stamps those a finished run left.

var _ world.Inbox = (*World)(nil)

const skInboxPrefix = "in#"

func inboxSK(id string) string { return skInboxPrefix + id }

// inboxItem is one message waiting in a run's inbox. A payload too large
// for the item lives in S3 under PayloadRef. Due and DueShard, the
// delivery time, put the message in the due index (overdue.go): a run
// with a message nobody folds, because the resumer's wake-up was lost, is
// overdue like one whose outside append nothing acted on.
type inboxItem struct {
	itemKeys
	ID         string      `json:"inboxId"`
	Event      world.Event `json:"event"`
	PayloadRef string      `json:"payloadRef,omitempty"`
	Due        int64       `json:"due"`
	DueShard   string      `json:"dueShard"`
}

func isInboxItem(av ddbItem) bool {
	s, ok := av[attrSK].(*types.AttributeValueMemberS)
	return ok && strings.HasPrefix(s.Value, skInboxPrefix)
}

// Deliver implements world.Inbox with one conditional PutItem (and an S3
// put for a large payload). A second delivery of the same ID is refused
// by the condition and changes nothing.
func (w *World) Deliver(ctx context.Context, runID string, msg world.InboxMessage) error {
	if msg.ID == "" {
		return fmt.Errorf("deliver to run %s: the message has no ID", runID)
	}
	item := inboxItem{itemKeys: itemKeys{PK: runPK(runID), SK: inboxSK(msg.ID)}, ID: msg.ID, Event: msg.Event,
		Due: msg.Event.CreatedAt.UnixMilli(), DueShard: dueShard(runID)}
	item.Event.RunID, item.Event.Slot = "", 0
	blobs := []blob{{Data: (*[]byte)(&item.Event.Payload), Ref: &item.PayloadRef, limit: eventBlobLimit}}
	keys, err := w.placeBlobs(ctx, "runs/"+runID, transactBudget, blobs)
	if err != nil {
		w.deleteObjects(ctx, keys)
		return fmt.Errorf("deliver to run %s: %w", runID, err)
	}
	av, err := marshalItem(&item)
	if err == nil {
		_, _, err = w.putIf(ctx, av, expression.AttributeNotExists(expression.Name(attrPK)))
	}
	if err != nil {
		w.deleteObjects(ctx, keys)
		return fmt.Errorf("deliver to run %s: %w", runID, err)
	}
	return nil
}

// Inbox implements world.Inbox with one consistent Query of the run's
// inbox items.
func (w *World) Inbox(ctx context.Context, runID string) ([]world.InboxMessage, error) {
	// "in$" is the first key past every "in#…".
	avs, err := w.queryRange(ctx, runPK(runID), skInboxPrefix, "in$")
	if err != nil {
		return nil, fmt.Errorf("inbox of run %s: %w", runID, err)
	}
	return w.decodeInbox(ctx, runID, avs)
}

// decodeInbox decodes a run's inbox items, fetching the payloads kept in
// S3, in delivery order.
func (w *World) decodeInbox(ctx context.Context, runID string, avs []ddbItem) ([]world.InboxMessage, error) {
	msgs := make([]world.InboxMessage, 0, len(avs))
	for _, av := range avs {
		var item inboxItem
		if err := unmarshalItem(av, &item); err != nil {
			return nil, fmt.Errorf("inbox of run %s: decode: %w", runID, err)
		}
		if err := w.loadBlob(ctx, item.PayloadRef, (*[]byte)(&item.Event.Payload)); err != nil {
			return nil, fmt.Errorf("inbox of run %s: %w", runID, err)
		}
		w.inboxObjects.remember(runID, item.ID, item.PayloadRef)
		msgs = append(msgs, world.InboxMessage{ID: item.ID, Event: item.Event})
	}
	slices.SortFunc(msgs, func(a, b world.InboxMessage) int {
		return cmp.Or(a.Event.CreatedAt.Compare(b.Event.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return msgs, nil
}

// Withdraw implements world.Inbox with one conditional DeleteItem (and,
// for a payload in S3, a DeleteObject of it).
func (w *World) Withdraw(ctx context.Context, runID, id string) (bool, error) {
	key := itemKeys{PK: runPK(runID), SK: inboxSK(id)}.key()
	held, refused, err := w.deleteIf(ctx, key, expression.AttributeExists(expression.Name(attrPK)))
	if err != nil {
		return false, fmt.Errorf("withdraw %s from run %s: %w", id, runID, err)
	}
	if ref := stringAttr(held, "payloadRef"); !refused && ref != "" {
		w.deleteObjects(ctx, []string{ref})
	}
	return !refused, nil
}

// AppendFolded implements world.Inbox: AppendLeased's transaction with a
// conditional Delete of each message folded, so a message is in the log or
// in the inbox, never both nor neither. Each message costs the transaction
// two of its items (its event and its delete).
//
// A folded message whose payload was in S3 has it written again with its
// event (or not at all, for a message the log records already), so its
// own object is deleted once the fold commits: the World knows it from
// the Inbox read the fold follows.
func (w *World) AppendFolded(ctx context.Context, owner, runID string, from int64, events []world.Event, update *world.RunUpdate, folded []string) ([]world.Event, error) {
	if owner == "" {
		return nil, fmt.Errorf("append to run %s: no lease owner: %w", runID, world.ErrLeaseLost)
	}
	missed, err := w.appendEvents(ctx, owner, runID, from, events, update, folded)
	if err == nil {
		w.deleteObjects(ctx, w.inboxObjects.take(runID, folded))
	}
	return missed, err
}

// inboxObjectsKept bounds how many inbox messages' S3 objects a World
// remembers between an Inbox read and the fold that follows it.
const inboxObjectsKept = 4096

// inboxObjects are the S3 objects of the messages with a large payload
// this World read from inboxes and has not folded yet. One forgotten (the
// bound reached, or folded by another process) is left in the bucket.
type inboxObjects struct {
	mu   sync.Mutex
	refs map[string]string // run ID, NUL, message ID → object key
}

func (o *inboxObjects) remember(runID, id, ref string) {
	if ref == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.refs == nil || len(o.refs) >= inboxObjectsKept {
		o.refs = map[string]string{}
	}
	o.refs[runID+"\x00"+id] = ref
}

// take returns and forgets the objects of the folded messages.
func (o *inboxObjects) take(runID string, folded []string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keys []string
	for _, id := range folded {
		if ref, ok := o.refs[runID+"\x00"+id]; ok {
			keys = append(keys, ref)
			delete(o.refs, runID+"\x00"+id)
		}
	}
	return keys
}

// inboxDeletes are the Deletes of folded messages in an append's
// transaction, each on condition that the message is still there.
func (w *World) inboxDeletes(runID string, folded []string) []types.TransactWriteItem {
	there := mustBuild(expression.NewBuilder().WithCondition(expression.AttributeExists(expression.Name(attrPK))))
	deletes := make([]types.TransactWriteItem, len(folded))
	for i, id := range folded {
		deletes[i] = types.TransactWriteItem{Delete: &types.Delete{
			TableName:                 &w.opts.Table,
			Key:                       itemKeys{PK: runPK(runID), SK: inboxSK(id)}.key(),
			ConditionExpression:       there.Condition(),
			ExpressionAttributeNames:  there.Names(),
			ExpressionAttributeValues: there.Values(),
		}}
	}
	return deletes
}
