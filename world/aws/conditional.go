package aws

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Conditional single-item writes. Each asks DynamoDB to return the item it
// found when it refuses, because the callers decide from that item what
// happened: another writer won, or the refusal is the SDK's retry of this
// very write whose answer was lost (the item then carries the writer's own
// claim). refused reports a refusal; held is then the item found, nil if
// there was none. A refusal is not an error: it is never retried blindly.

type ddbItem = map[string]types.AttributeValue

// putIf writes it if cond holds.
func (w *World) putIf(ctx context.Context, it ddbItem, cond expression.ConditionBuilder) (held ddbItem, refused bool, err error) {
	e, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return nil, false, err
	}
	_, err = w.ddb.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           &w.opts.Table,
		Item:                                it,
		ConditionExpression:                 e.Condition(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return refusal(err)
}

// updateIf applies update to the item at key if cond holds. Unlike the
// others it also returns the item as updated when it succeeds, in held:
// the item is small, and a caller may need a value the update did not set.
func (w *World) updateIf(ctx context.Context, key ddbItem, update expression.UpdateBuilder, cond expression.ConditionBuilder) (held ddbItem, refused bool, err error) {
	e, err := expression.NewBuilder().WithCondition(cond).WithUpdate(update).Build()
	if err != nil {
		return nil, false, err
	}
	out, err := w.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &w.opts.Table,
		Key:                                 key,
		UpdateExpression:                    e.Update(),
		ConditionExpression:                 e.Condition(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return out.Attributes, false, nil
	}
	return refusal(err)
}

// deleteIf deletes the item at key if cond holds, and returns the item as
// it was, deleted or refused.
func (w *World) deleteIf(ctx context.Context, key ddbItem, cond expression.ConditionBuilder) (held ddbItem, refused bool, err error) {
	e, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return nil, false, err
	}
	out, err := w.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                           &w.opts.Table,
		Key:                                 key,
		ConditionExpression:                 e.Condition(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return out.Attributes, false, nil
	}
	return refusal(err)
}

func refusal(err error) (ddbItem, bool, error) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true, nil
	}
	return nil, false, err
}
