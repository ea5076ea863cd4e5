package aws

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxTransactItems is DynamoDB's limit on the items of one transaction.
const maxTransactItems = 100

// conflictAttempts bounds the tries of a transaction that DynamoDB cancels
// because another transaction held one of its items at the same moment.
const conflictAttempts = 4

// transact writes items in one transaction. The SDK gives each call a
// ClientRequestToken that its own retries reuse, so a retry after a lost
// response replays the outcome instead of writing twice.
//
// A cancellation with a refused condition is returned as it is (a
// *types.TransactionCanceledException, read with cancelReasons). One that
// only reports TransactionConflict wrote nothing and checked nothing, so it
// is tried again after a short random pause.
func (w *World) transact(ctx context.Context, items []types.TransactWriteItem) error {
	for attempt := 1; ; attempt++ {
		_, err := w.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil || attempt == conflictAttempts || !onlyConflicts(err) {
			return err
		}
		pause(ctx, time.Duration(rand.Int64N(int64(25*time.Millisecond)<<attempt)))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func onlyConflicts(err error) bool {
	reasons, ok := cancelReasons(err)
	if !ok {
		return false
	}
	conflict := false
	for _, r := range reasons {
		switch aws.ToString(r.Code) {
		case "TransactionConflict":
			conflict = true
		case "", "None":
		default:
			return false
		}
	}
	return conflict
}

// cancelReasons returns the per-item reasons of a cancelled transaction, in
// the order of its items.
func cancelReasons(err error) ([]types.CancellationReason, bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil, false
	}
	return tce.CancellationReasons, true
}

// refused reports whether item i's condition failed, and returns the item
// as it was if the write asked for it (ALL_OLD); nil if it did not exist.
func refused(reasons []types.CancellationReason, i int) (bool, map[string]types.AttributeValue) {
	if i >= len(reasons) || aws.ToString(reasons[i].Code) != "ConditionalCheckFailed" {
		return false, nil
	}
	return true, reasons[i].Item
}

// newItemOnly is the condition of a write that must create its item.
var newItemOnly = mustBuild(expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(attrPK))))

// conditionalPut is a Put of a transaction that only succeeds if the item
// does not exist yet.
func (w *World) conditionalPut(item map[string]types.AttributeValue) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                 &w.opts.Table,
		Item:                      item,
		ConditionExpression:       newItemOnly.Condition(),
		ExpressionAttributeNames:  newItemOnly.Names(),
		ExpressionAttributeValues: newItemOnly.Values(),
	}}
}

// mustBuild builds an expression made of constants, which cannot fail.
func mustBuild(b expression.Builder) expression.Expression {
	e, err := b.Build()
	if err != nil {
		panic("world/aws: invalid constant expression: " + err.Error())
	}
	return e
}
