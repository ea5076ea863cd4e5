package aws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Teardown deletes what Bootstrap created, the bucket's objects with it,
// so that tests leave nothing behind. It carries on past a failure and
// returns every one.
func Teardown(ctx context.Context, cfg aws.Config, opts Options) error {
	ddb, q, blobs := newClients(cfg, nil)
	var errs []error
	if _, err := ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &opts.Table}); err != nil {
		errs = append(errs, fmt.Errorf("delete table: %w", err))
	}
	if _, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &opts.QueueURL}); err != nil {
		errs = append(errs, fmt.Errorf("delete queue: %w", err))
	}
	for what, url := range map[string]string{"dead-letter queue": opts.DeadLetterQueueURL, "long-step queue": opts.LongStepQueueURL} {
		if url == "" {
			continue
		}
		if _, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url}); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", what, err))
		}
	}
	if opts.StreamEvents.enabled() {
		if err := deleteEventAPI(ctx, cfg, opts.StreamEvents); err != nil {
			errs = append(errs, fmt.Errorf("delete event API: %w", err))
		}
	}
	pages := s3.NewListObjectsV2Paginator(blobs, &s3.ListObjectsV2Input{Bucket: &opts.Bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("list objects: %w", err))...)
		}
		var ids []s3types.ObjectIdentifier
		for _, o := range page.Contents {
			ids = append(ids, s3types.ObjectIdentifier{Key: o.Key})
		}
		if len(ids) > 0 {
			if _, err := blobs.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &opts.Bucket, Delete: &s3types.Delete{Objects: ids}}); err != nil {
				errs = append(errs, fmt.Errorf("delete objects: %w", err))
			}
		}
	}
	if _, err := blobs.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &opts.Bucket}); err != nil {
		errs = append(errs, fmt.Errorf("delete bucket: %w", err))
	}
	return errors.Join(errs...)
}
