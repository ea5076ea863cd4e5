package aws

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// RequestUnits are the DynamoDB on-demand request units the World's calls
// consumed, reckoned by DynamoDB's item-size rules from what each request
// wrote and each response returned
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
// They are what an on-demand table bills. Two are lower bounds: an update
// or a delete is billed by the item's size, which the World does not
// read, so it counts the key and the values it writes (all of the World's
// updated items are well under 1 KB, where the bound is exact).
type RequestUnits struct {
	Read, Write float64
}

// unitCounter sums the request units of the World's DynamoDB calls. It
// sits in the initialize step, outside the retry loop: a throttled
// attempt is not billed, so a call counts once whatever its attempts.
type unitCounter struct {
	mu    sync.Mutex
	units RequestUnits
}

func (u *unitCounter) register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("workflowRequestUnits",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err == nil || refusedWrite(err) {
				r, w := requestUnits(in.Parameters, out.Result)
				u.mu.Lock()
				u.units.Read += r
				u.units.Write += w
				u.mu.Unlock()
			}
			return out, md, err
		}), middleware.After)
}

// refusedWrite reports whether err is a write DynamoDB refused on its
// condition: it bills such a write as if it were made.
func refusedWrite(err error) bool {
	var failed *types.ConditionalCheckFailedException
	var cancelled *types.TransactionCanceledException
	return errors.As(err, &failed) || errors.As(err, &cancelled)
}

func (u *unitCounter) get() RequestUnits {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.units
}

func (u *unitCounter) reset() {
	u.mu.Lock()
	u.units = RequestUnits{}
	u.mu.Unlock()
}

// requestUnits returns the read and write units of one successful
// DynamoDB call; other services' calls have none.
func requestUnits(input, output any) (read, write float64) {
	switch in := input.(type) {
	case *dynamodb.PutItemInput:
		return 0, writeUnits(itemSize(in.Item))
	case *dynamodb.UpdateItemInput:
		return 0, writeUnits(itemSize(in.Key) + itemSize(in.ExpressionAttributeValues))
	case *dynamodb.DeleteItemInput:
		return 0, writeUnits(itemSize(in.Key))
	case *dynamodb.BatchWriteItemInput:
		for _, requests := range in.RequestItems {
			for _, r := range requests {
				if r.PutRequest != nil {
					write += writeUnits(itemSize(r.PutRequest.Item))
				} else if r.DeleteRequest != nil {
					write += writeUnits(itemSize(r.DeleteRequest.Key))
				}
			}
		}
		return 0, write
	case *dynamodb.TransactWriteItemsInput:
		for _, item := range in.TransactItems {
			write += 2 * writeUnits(transactItemSize(item))
		}
		return 0, write
	case *dynamodb.GetItemInput:
		out, _ := output.(*dynamodb.GetItemOutput)
		var item map[string]types.AttributeValue
		if out != nil {
			item = out.Item
		}
		return readUnits(itemSize(item), in.ConsistentRead), 0
	case *dynamodb.QueryInput:
		out, _ := output.(*dynamodb.QueryOutput)
		if out == nil {
			return 0, 0
		}
		// A query is billed on the items it read, summed, not one by one.
		total := 0
		for _, item := range out.Items {
			total += itemSize(item)
		}
		return readUnits(total, in.ConsistentRead), 0
	case *dynamodb.BatchGetItemInput:
		out, _ := output.(*dynamodb.BatchGetItemOutput)
		if out == nil {
			return 0, 0
		}
		for table, items := range out.Responses {
			consistent := in.RequestItems[table].ConsistentRead
			for _, item := range items {
				read += readUnits(itemSize(item), consistent)
			}
		}
		return read, 0
	}
	return 0, 0
}

// transactItemSize is the size a transaction's item is billed by, as far
// as the request shows it.
func transactItemSize(item types.TransactWriteItem) int {
	switch {
	case item.Put != nil:
		return itemSize(item.Put.Item)
	case item.Update != nil:
		return itemSize(item.Update.Key) + itemSize(item.Update.ExpressionAttributeValues)
	case item.Delete != nil:
		return itemSize(item.Delete.Key)
	case item.ConditionCheck != nil:
		return itemSize(item.ConditionCheck.Key)
	}
	return 0
}

// writeUnits: one unit per KB or part of one, at least one.
func writeUnits(size int) float64 { return max(math.Ceil(float64(size)/1024), 1) }

// readUnits: one unit per 4 KB or part of one, at least one; half that
// for an eventually consistent read.
func readUnits(size int, consistent *bool) float64 {
	units := max(math.Ceil(float64(size)/4096), 1)
	if consistent == nil || !*consistent {
		units /= 2
	}
	return units
}

// itemSize is an item's size by DynamoDB's rules: each attribute's name
// plus its value.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sumSizes(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sumSizes(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sumSizes(v.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberL:
		// 3 bytes for the list, 1 per element.
		return 3 + sumSizes(v.Value, func(e types.AttributeValue) int { return 1 + valueSize(e) })
	case *types.AttributeValueMemberM:
		// 3 bytes for the map, 1 per element, plus the names.
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize: about one byte per two significant digits, plus one.
func numberSize(n string) int {
	digits := strings.Trim(strings.ReplaceAll(strings.TrimPrefix(n, "-"), ".", ""), "0")
	return (len(digits)+1)/2 + 1
}

func sumSizes[T any](values []T, size func(T) int) int {
	n := 0
	for _, v := range values {
		n += size(v)
	}
	return n
}
