package functions_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
)

// newStack prepares a test that deploys a stack: it returns the
// repository's root and a fresh stack name starting with prefix. On a fresh machine scripts/sam.sh first installs the SAM CLI,
// which takes a couple of minutes, not part of the test's own time.
func newStack(t *testing.T, prefix string) (root, stack string) {
	requireEmulator(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	install := exec.CommandContext(t.Context(), filepath.Join(root, "scripts", "sam.sh"), "--version")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("installing the SAM CLI: %v\n%s", err, out)
	}
	return root, prefix + strings.ToLower(rand.Text()[:10])
}

// deployStack deploys the template as stack with scripts/local.sh (its
// environment the test's plus env) and returns its outputs, with the
// example API's bearer token as "ApiToken", read from the stack's secret,
// if the stack has the API; the stack and the resources it retains are
// deleted when the test ends.
func deployStack(t *testing.T, ctx context.Context, root, stack string, env ...string) map[string]string {
	t.Cleanup(func() {
		deleteStack(t, root, stack)
		os.RemoveAll(filepath.Join(root, ".aws-sam", "local", stack))
	})
	out, logs := deploy(t, ctx, root, stack, env...)
	want := []string{"WebhookUrl", "TableName", "BucketName", "QueueUrl", "DeadLetterQueueUrl", "FlowFunctionName", "ScheduleGroupName", "DeadLetterAlarmName", "LongStepDeadLetterAlarmName", "PayloadKeyArn"}
	withAPI := !slices.Contains(env, noExampleAPI)
	if withAPI {
		want = append(want, "ApiUrl", "ApiTokenSecret", "FlightUrl")
	}
	for _, k := range want {
		if out[k] == "" {
			t.Fatalf("stack output %s missing; got %v\n%s", k, out, logs)
		}
	}
	t.Cleanup(func() { deleteRetained(t, out) })
	if !withAPI {
		return out
	}
	secret, err := secretsmanager.NewFromConfig(emulator.Config()).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(out["ApiTokenSecret"])})
	if err != nil || aws.ToString(secret.SecretString) == "" {
		t.Fatalf("the API's token in %s: %v", out["ApiTokenSecret"], err)
	}
	out["ApiToken"] = *secret.SecretString
	return out
}

// testParameters are the test stacks' parameters: timers past
// scheduleAfter wake through the scheduler (longsleep_test.go), and the
// dead-letter alarm notifies alarmTopic.
var testParameters = fmt.Sprintf("ScheduleAfterSeconds=%d AlarmTopicArn=%s", int(scheduleAfter.Seconds()), alarmTopic)

// alarmTopic stands for an SNS topic: MiniStack's CloudWatch does not
// check that an alarm's actions exist.
const alarmTopic = "arn:aws:sns:us-east-1:000000000000:workflow-test-alarms"

// deploy builds and deploys stack with scripts/local.sh, its environment
// the test's plus env, and returns the stack's outputs and what the
// script logged (the deploy gate's report among it).
func deploy(t *testing.T, ctx context.Context, root, stack string, env ...string) (map[string]string, string) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "local.sh"), "deploy", stack)
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+emulator.Endpoint, "STACK_PARAMETERS="+testParameters)
	cmd.Env = append(cmd.Env, env...)
	var logs strings.Builder
	cmd.Stderr = &logs
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/local.sh deploy %s: %v\n%s", stack, err, logs.String())
	}
	out := map[string]string{}
	for line := range strings.Lines(string(stdout)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			out[k] = v
		}
	}
	return out, logs.String()
}

func deleteStack(t *testing.T, root, stack string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "sam.sh"), "delete", "--stack-name", stack, "--no-prompts", "--region", "us-east-1")
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+emulator.Endpoint, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("sam delete %s: %v\n%s", stack, err, out)
	}
	// The Event API scripts/local.sh made for the stack, which the stack
	// names but does not own.
	events := exec.CommandContext(ctx, filepath.Join(root, "scripts", "local.sh"), "delete-events", stack)
	events.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+emulator.Endpoint)
	if out, err := events.CombinedOutput(); err != nil {
		t.Logf("delete the Event API of %s: %v\n%s", stack, err, out)
	}
}

// deleteRetained deletes the table and bucket the template keeps when its
// stack is deleted (DeletionPolicy: Retain), and schedules the deletion of
// the payload key it keeps with them.
func deleteRetained(t *testing.T, out map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := emulator.Config()
	table, bucket, key := out["TableName"], out["BucketName"], out["PayloadKeyArn"]
	if _, err := kms.NewFromConfig(cfg).ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{KeyId: &key, PendingWindowInDays: aws.Int32(7)}); err != nil {
		t.Logf("delete key %s: %v", key, err)
	}
	if _, err := dynamodb.NewFromConfig(cfg).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &table}); err != nil {
		t.Logf("delete table %s: %v", table, err)
	}
	blobs := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	pages := s3.NewListObjectsV2Paginator(blobs, &s3.ListObjectsV2Input{Bucket: &bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Logf("list bucket %s: %v", bucket, err)
			return
		}
		for _, o := range page.Contents {
			if _, err := blobs.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key}); err != nil {
				t.Logf("delete %s/%s: %v", bucket, aws.ToString(o.Key), err)
			}
		}
	}
	if _, err := blobs.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		var missing *s3types.NoSuchBucket
		if !errors.As(err, &missing) {
			t.Logf("delete bucket %s: %v", bucket, err)
		}
	}
}

// queueVisibility is the visibility timeout of the test stack's queue,
// far below the template's six times the flow function's timeout.
const queueVisibility = 15 * time.Second

// setVisibility sets the queue's visibility timeout.
func setVisibility(t *testing.T, ctx context.Context, url string, d time.Duration) {
	_, err := sqs.NewFromConfig(emulator.Config()).SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
		QueueUrl:   &url,
		Attributes: map[string]string{string(sqstypes.QueueAttributeNameVisibilityTimeout): fmt.Sprint(int(d.Seconds()))},
	})
	if err != nil {
		t.Fatalf("set the visibility timeout of %s: %v", url, err)
	}
}

// queueDepth counts the queue's messages, visible or in flight.
func queueDepth(t *testing.T, ctx context.Context, url string) int {
	attrs, err := sqs.NewFromConfig(emulator.Config()).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		t.Fatalf("queue attributes of %s: %v", url, err)
	}
	var n int
	for _, v := range attrs.Attributes {
		var k int
		fmt.Sscan(v, &k)
		n += k
	}
	return n
}
