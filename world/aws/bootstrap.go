package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow/world"
)

// Names names the resources Bootstrap creates.
type Names struct {
	Table  string
	Queue  string
	Bucket string
	// Retention is the Options.Retention the bucket's lifecycle rule for
	// finished runs' objects is made for (0: world.DefaultRetention).
	Retention time.Duration
	// DeadLetterAfter, if set, gives the queue a dead-letter queue, named
	// Queue+"-dlq", that takes a message after that many receives (the
	// template's is 5); 0: no dead-letter queue.
	DeadLetterAfter int
	// LongStepQueue, if set, names a second queue, Options.LongStepQueueURL
	// (see World.LongStepQueue), made like Queue but without a dead-letter
	// queue.
	LongStepQueue string
	// EventAPI, if set, names an AppSync Events API made for
	// Options.StreamEvents, with IAM authorization and the channel
	// namespace DefaultEventNamespace (eventapi.go).
	EventAPI string
}

// tableWait bounds how long Bootstrap waits for a new table to be active.
const tableWait = 5 * time.Minute

// Bootstrap creates the table, queue and bucket a World needs, for local
// use and tests; deployments create them from their template, with the
// same settings. A table or bucket that exists already is kept as it is;
// SQS returns an existing queue only if its attributes match.
//
//   - table: on-demand, key (pk, sk), the two write-sharded run listing
//     indexes (listing.go), the
//     keys-only index of runs by due time (overdue.go), TTL on expiresAt;
//   - queue: standard, default delay and receive wait 0 (the SDK cannot
//     send a zero, so the World relies on these defaults), 14 days'
//     retention; a dead-letter queue if names.DeadLetterAfter is set;
//   - bucket: lifecycle rules that abort multipart uploads left
//     incomplete for a day, delete reply streams' objects a day after
//     upload and finished runs' objects names.Retention after the run
//     ended (rounded up to whole days; see retention.go).
func Bootstrap(ctx context.Context, cfg aws.Config, names Names) (Options, error) {
	ddb, q, blobs := newClients(cfg, nil)
	if err := createTable(ctx, ddb, names.Table); err != nil {
		return Options{}, fmt.Errorf("bootstrap table %s: %w", names.Table, err)
	}
	queueURL, deadURL, err := createQueues(ctx, q, names.Queue, names.DeadLetterAfter)
	if err != nil {
		return Options{}, fmt.Errorf("bootstrap queue %s: %w", names.Queue, err)
	}
	if err := createBucket(ctx, blobs, cfg.Region, names.Bucket, world.RetentionOrDefault(names.Retention)); err != nil {
		return Options{}, fmt.Errorf("bootstrap bucket %s: %w", names.Bucket, err)
	}
	opts := Options{Table: names.Table, QueueURL: queueURL, Bucket: names.Bucket, DeadLetterQueueURL: deadURL}
	if names.LongStepQueue != "" {
		if opts.LongStepQueueURL, _, err = createQueues(ctx, q, names.LongStepQueue, 0); err != nil {
			return Options{}, fmt.Errorf("bootstrap long-step queue %s: %w", names.LongStepQueue, err)
		}
	}
	if names.EventAPI != "" {
		if opts.StreamEvents, err = createEventAPI(ctx, cfg, names.EventAPI); err != nil {
			return Options{}, fmt.Errorf("bootstrap event API %s: %w", names.EventAPI, err)
		}
	}
	return opts, nil
}

// listedAttributes are what the listing indexes project beside their keys:
// what ListRuns filters on (listing.go); template.yaml has the same.
var listedAttributes = []string{attrWorkflow, "status", "attributes", attrExpiresAt}

func createTable(ctx context.Context, ddb *dynamodb.Client, table string) error {
	str := func(name string) ddbtypes.AttributeDefinition {
		return ddbtypes.AttributeDefinition{AttributeName: aws.String(name), AttributeType: ddbtypes.ScalarAttributeTypeS}
	}
	key := func(hash, rng string) []ddbtypes.KeySchemaElement {
		return []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String(hash), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String(rng), KeyType: ddbtypes.KeyTypeRange},
		}
	}
	listed := &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeInclude, NonKeyAttributes: listedAttributes}
	keysOnly := &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeKeysOnly}
	due := ddbtypes.AttributeDefinition{AttributeName: aws.String(attrDue), AttributeType: ddbtypes.ScalarAttributeTypeN}
	_, err := ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{str(attrPK), str(attrSK), str(attrCreatedShard), str(attrWorkflowShard), str(attrCreated), str(attrDueShard), due},
		KeySchema:            key(attrPK, attrSK),
		GlobalSecondaryIndexes: []ddbtypes.GlobalSecondaryIndex{
			{IndexName: aws.String(indexCreated), KeySchema: key(attrCreatedShard, attrCreated), Projection: listed},
			{IndexName: aws.String(indexWorkflow), KeySchema: key(attrWorkflowShard, attrCreated), Projection: listed},
			{IndexName: aws.String(indexDue), KeySchema: key(attrDueShard, attrDue), Projection: keysOnly},
		},
	})
	var inUse *ddbtypes.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return err
	}
	waiter := dynamodb.NewTableExistsWaiter(ddb, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = time.Second })
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, tableWait); err != nil {
		return err
	}
	ttl, err := ddb.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		return err
	}
	if d := ttl.TimeToLiveDescription; d != nil && d.TimeToLiveStatus != ddbtypes.TimeToLiveStatusDisabled {
		return nil
	}
	_, err = ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(attrExpiresAt), Enabled: aws.Bool(true)},
	})
	return err
}

// createQueues creates the queue and, if deadLetterAfter is set, its
// dead-letter queue first, and returns their URLs.
func createQueues(ctx context.Context, q *sqs.Client, name string, deadLetterAfter int) (queueURL, deadURL string, err error) {
	attrs := map[string]string{
		string(sqstypes.QueueAttributeNameDelaySeconds):                  "0",
		string(sqstypes.QueueAttributeNameReceiveMessageWaitTimeSeconds): "0",
		string(sqstypes.QueueAttributeNameMessageRetentionPeriod):        "1209600",
	}
	if deadLetterAfter > 0 {
		dead, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{
			QueueName:  aws.String(name + "-dlq"),
			Attributes: map[string]string{string(sqstypes.QueueAttributeNameMessageRetentionPeriod): "1209600"},
		})
		if err != nil {
			return "", "", err
		}
		deadURL = aws.ToString(dead.QueueUrl)
		arn, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: &deadURL, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
		})
		if err != nil {
			return "", "", err
		}
		policy, err := json.Marshal(redrivePolicy{Target: arn.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], MaxReceiveCount: deadLetterAfter})
		if err != nil {
			return "", "", err
		}
		attrs[string(sqstypes.QueueAttributeNameRedrivePolicy)] = string(policy)
	}
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.QueueUrl), deadURL, nil
}

func createBucket(ctx context.Context, blobs *s3.Client, region, bucket string, retention time.Duration) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
	if region != "" && region != "us-east-1" { // us-east-1 takes no location constraint
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
	}
	_, err := blobs.CreateBucket(ctx, in)
	var owned *s3types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return err
	}
	_, err = blobs.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket:                 aws.String(bucket),
		LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: lifecycleRules(retention)},
	})
	return err
}

// lifecycleRules are the bucket's rules; template.yaml has the same.
func lifecycleRules(retention time.Duration) []s3types.LifecycleRule {
	expireTagged := func(id, value string, days int32) s3types.LifecycleRule {
		return s3types.LifecycleRule{
			ID:         aws.String(id),
			Status:     s3types.ExpirationStatusEnabled,
			Filter:     &s3types.LifecycleRuleFilter{Tag: &s3types.Tag{Key: aws.String(tagExpiry), Value: aws.String(value)}},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(days)},
		}
	}
	rules := []s3types.LifecycleRule{{
		ID:                             aws.String("abort-incomplete-multipart-uploads"),
		Status:                         s3types.ExpirationStatusEnabled,
		Filter:                         &s3types.LifecycleRuleFilter{Prefix: aws.String("")},
		AbortIncompleteMultipartUpload: &s3types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)},
	}, expireTagged("expire-replies", tagValueReply, 1)}
	if retention != world.KeepForever {
		days := int32((retention + 24*time.Hour - 1) / (24 * time.Hour))
		rules = append(rules, expireTagged("expire-finished-runs", tagValueRun, days))
	}
	return rules
}
