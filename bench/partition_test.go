package bench

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// BenchmarkEmulatorPartition times single DynamoDB calls on MiniStack,
// with no proxy, against a partition of 10, 1,000 and 10,000 items of
// 1 KB laid out as a run's log (pk "run#<id>", sk "ev#<20 digits>", then
// "ev#head"), on a table bootstrapped as the AWS World's: a Query of the
// log's tail (the last two events and the head), a GetItem of the head,
// and a TransactWriteItems that appends an event on a condition on the
// head. On DynamoDB each costs the same at every size; whatever grows
// here is the emulator's (README, "Resume after a long history").
func BenchmarkEmulatorPartition(b *testing.B) {
	if err := emulator.Health(2 * time.Second); err != nil {
		b.Skip(err)
	}
	cfg := emulator.Config()
	name := "wf-partition-" + strings.ToLower(rand.Text()[:12])
	opts, err := awsworld.Bootstrap(b.Context(), cfg, awsworld.Names{Table: name, Queue: name, Bucket: name})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { teardownAWS(cfg, opts) })
	ddb := dynamodb.NewFromConfig(cfg)
	table := aws.String(opts.Table)
	for _, size := range HistoryLengths {
		pk := fmt.Sprintf("run#partition-%d", size)
		if err := fillPartition(b, ddb, opts.Table, pk, size); err != nil {
			b.Fatal(err)
		}
		key := func(sk string) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{"pk": str(pk), "sk": str(sk)}
		}
		next := size // the slot the next append writes
		calls := []struct {
			name string
			call func() error
		}{
			{"Query", func() error {
				_, err := ddb.Query(b.Context(), &dynamodb.QueryInput{
					TableName: table, ConsistentRead: aws.Bool(true),
					KeyConditionExpression:    aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk), ":from": str(eventKey(size - 2)), ":to": str("ev#head")},
				})
				return err
			}},
			{"GetItem", func() error {
				_, err := ddb.GetItem(b.Context(), &dynamodb.GetItemInput{TableName: table, ConsistentRead: aws.Bool(true), Key: key("ev#head")})
				return err
			}},
			{"TransactWriteItems", func() error {
				next++
				_, err := ddb.TransactWriteItems(b.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{
						TableName: table, Key: key("ev#head"),
						UpdateExpression:          aws.String("SET #next = #next + :one"),
						ConditionExpression:       aws.String("attribute_exists(pk)"),
						ExpressionAttributeNames:  map[string]string{"#next": "next"},
						ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
					}},
					{Put: &types.Put{TableName: table, Item: eventItem(pk, next-1), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
				}})
				return err
			}},
		}
		for _, c := range calls {
			b.Run(fmt.Sprintf("%d/%s", size, c.name), func(b *testing.B) {
				for b.Loop() {
					if err := c.call(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func eventKey(slot int) string { return fmt.Sprintf("ev#%020d", slot) }

// eventItem is an event item of the size the history metric's are (1 KB
// of payload).
func eventItem(pk string, slot int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": str(pk), "sk": str(eventKey(slot)), "payload": str(strings.Repeat("x", 1024))}
}

// fillPartition writes n events and a log head to partition pk.
func fillPartition(b *testing.B, ddb *dynamodb.Client, table, pk string, n int) error {
	for start := 0; start < n; start += 25 {
		var puts []types.WriteRequest
		for slot := start; slot < min(start+25, n); slot++ {
			puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: eventItem(pk, slot)}})
		}
		for len(puts) > 0 {
			out, err := ddb.BatchWriteItem(b.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: puts}})
			if err != nil {
				return err
			}
			puts = out.UnprocessedItems[table]
		}
	}
	head := map[string]types.AttributeValue{"pk": str(pk), "sk": str("ev#head"), "next": &types.AttributeValueMemberN{Value: fmt.Sprint(n)}}
	_, err := ddb.PutItem(b.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: head})
	return err
}
