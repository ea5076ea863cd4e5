package aws

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/lambdaworkflow/workflow/internal/emulator"
)

// emulatorConfig returns an SDK config for the emulator, or skips the test
// if the emulator is not running (fails it in CI).
func emulatorConfig(t *testing.T) aws.Config {
	return emulator.Require(t, 2*time.Second)
}

// newTestWorld bootstraps a table, queue and bucket of the test's own and
// returns a World on them. The resources are deleted when the test ends.
func newTestWorld(t *testing.T) *World {
	return newTestWorldWith(t, emulatorConfig(t))
}

// newTestWorldWith is newTestWorld on a config of the test's own (one
// whose HTTP client injects faults, say); bootstrapping and cleaning up use
// the default HTTP client.
func newTestWorldWith(t *testing.T, cfg aws.Config) *World {
	t.Helper()
	plain := cfg
	plain.HTTPClient = nil
	name := "wf-test-" + strings.ToLower(rand.Text())
	opts, err := Bootstrap(t.Context(), plain, Names{Table: name, Queue: name, Bucket: name})
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	t.Cleanup(func() { teardown(t, plain, opts) })
	w, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return w
}

// teardown deletes what Bootstrap created, so the emulator does not pile
// up the resources of every test run.
func teardown(t *testing.T, cfg aws.Config, opts Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ddb, q, blobs := newClients(cfg, nil)
	if _, err := ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &opts.Table}); err != nil {
		t.Logf("teardown: delete table: %v", err)
	}
	if _, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &opts.QueueURL}); err != nil {
		t.Logf("teardown: delete queue: %v", err)
	}
	pages := s3.NewListObjectsV2Paginator(blobs, &s3.ListObjectsV2Input{Bucket: &opts.Bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Logf("teardown: list objects: %v", err)
			return
		}
		var ids []s3types.ObjectIdentifier
		for _, o := range page.Contents {
			ids = append(ids, s3types.ObjectIdentifier{Key: o.Key})
		}
		if len(ids) > 0 {
			if _, err := blobs.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &opts.Bucket, Delete: &s3types.Delete{Objects: ids}}); err != nil {
				t.Logf("teardown: delete objects: %v", err)
			}
		}
	}
	if _, err := blobs.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &opts.Bucket}); err != nil {
		t.Logf("teardown: delete bucket: %v", err)
	}
}
