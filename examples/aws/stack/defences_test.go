package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
)

// checkDefences asserts that the deployed stack carries the template's
// defences that no call through the functions would show: the bucket
// refuses plain HTTP, both queues are encrypted at rest.
func checkDefences(t *testing.T, ctx context.Context, out map[string]string) {
	t.Helper()
	cfg := emulator.Config()
	blobs := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	got, err := blobs.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(out["BucketName"])})
	if err != nil {
		t.Fatalf("bucket policy of %s: %v", out["BucketName"], err)
	}
	var policy struct {
		Statement []struct {
			Effect    string
			Action    any
			Condition map[string]map[string]any
		}
	}
	if err := json.Unmarshal([]byte(aws.ToString(got.Policy)), &policy); err != nil {
		t.Fatalf("bucket policy %s: %v", aws.ToString(got.Policy), err)
	}
	denied := false
	for _, s := range policy.Statement {
		denied = denied || s.Effect == "Deny" && s.Action == "s3:*" && s.Condition["Bool"]["aws:SecureTransport"] == "false"
	}
	if !denied {
		t.Errorf("bucket policy %s does not deny requests without TLS", aws.ToString(got.Policy))
	}

	queues := sqs.NewFromConfig(cfg)
	for _, name := range []string{"QueueUrl", "DeadLetterQueueUrl"} {
		attrs, err := queues.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl:       aws.String(out[name]),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameSqsManagedSseEnabled},
		})
		if err != nil {
			t.Fatalf("attributes of %s: %v", out[name], err)
		}
		if v := attrs.Attributes[string(sqstypes.QueueAttributeNameSqsManagedSseEnabled)]; v != "true" {
			t.Errorf("%s: SqsManagedSseEnabled = %q, want true", out[name], v)
		}
	}
}

// checkFlowConcurrency asserts that the queue's event source mapping caps
// the flow function's concurrency at the FlowMaxConcurrency parameter's
// default. (The webhook function's ReservedConcurrentExecutions is left to
// checkov: MiniStack's CloudFormation does not apply it.)
func checkFlowConcurrency(t *testing.T, ctx context.Context, out map[string]string) {
	t.Helper()
	cfg := emulator.Config()
	attrs, err := sqs.NewFromConfig(cfg).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(out["QueueUrl"]),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatalf("ARN of %s: %v", out["QueueUrl"], err)
	}
	queueARN := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	mappings, err := lambda.NewFromConfig(cfg).ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{EventSourceArn: &queueARN})
	if err != nil {
		t.Fatalf("event source mappings of %s: %v", queueARN, err)
	}
	if len(mappings.EventSourceMappings) != 1 {
		t.Fatalf("%d event source mappings on %s, want 1", len(mappings.EventSourceMappings), queueARN)
	}
	if sc := mappings.EventSourceMappings[0].ScalingConfig; sc == nil || aws.ToInt32(sc.MaximumConcurrency) != 50 {
		t.Errorf("the flow queue's mapping has ScalingConfig %+v, want MaximumConcurrency 50", sc)
	}
}

// checkDeadLetterAlarm asserts that each of the stack's dead-letter
// queues (the flow queue's and the long-step queue's) has an alarm that
// watches its depth, goes off at the first message and notifies the
// AlarmTopicArn it was deployed with.
func checkDeadLetterAlarm(t *testing.T, ctx context.Context, out map[string]string) {
	t.Helper()
	for alarm, queueURL := range map[string]string{
		"DeadLetterAlarmName":         "DeadLetterQueueUrl",
		"LongStepDeadLetterAlarmName": "LongStepDeadLetterQueueUrl",
	} {
		name := out[alarm]
		a := describeAlarm(t, ctx, name)
		queue := lastSegment(out[queueURL])
		watches := len(a.Dimensions) == 1 && a.Dimensions[0].Name == "QueueName" && a.Dimensions[0].Value == queue
		if a.Namespace != "AWS/SQS" || a.MetricName != "ApproximateNumberOfMessagesVisible" || !watches {
			t.Errorf("alarm %s watches %s %s %+v, want AWS/SQS ApproximateNumberOfMessagesVisible of %s", name, a.Namespace, a.MetricName, a.Dimensions, queue)
		}
		if a.ComparisonOperator != "GreaterThanThreshold" || a.Threshold != 0 {
			t.Errorf("alarm %s goes off when %s %v, want above 0", name, a.ComparisonOperator, a.Threshold)
		}
		if len(a.AlarmActions) != 1 || a.AlarmActions[0] != alarmTopic {
			t.Errorf("alarm %s notifies %v, want %s", name, a.AlarmActions, alarmTopic)
		}
	}
}

type metricAlarm struct {
	Namespace, MetricName, ComparisonOperator string
	Dimensions                                []struct{ Name, Value string }
	Threshold                                 float64
	AlarmActions                              []string
}

// describeAlarm reads the alarm named name. Not through the SDK: its
// CloudWatch client speaks the RPCv2 CBOR protocol, which MiniStack does
// not; CloudWatch also answers the AWS JSON 1.0 protocol, used here.
func describeAlarm(t *testing.T, ctx context.Context, name string) metricAlarm {
	t.Helper()
	body, err := json.Marshal(map[string]any{"AlarmNames": []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", emulator.Endpoint+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "GraniteServiceVersion20100801.DescribeAlarms")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("alarm %s: %v", name, err)
	}
	defer resp.Body.Close()
	var got struct{ MetricAlarms []metricAlarm }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("alarm %s: %s, %v", name, resp.Status, err)
	}
	if len(got.MetricAlarms) != 1 {
		t.Fatalf("%d alarms named %s, want 1", len(got.MetricAlarms), name)
	}
	return got.MetricAlarms[0]
}
