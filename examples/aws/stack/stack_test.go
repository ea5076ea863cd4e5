package stack_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
)

// deployExamples deploys template.yaml with the examples' flow function
// and the examples' stack beside it (scripts/local.sh deploy-examples,
// its environment the test's, the test stacks' parameters, and env), and
// returns the stack with both stacks' outputs, and the example API's
// bearer token as "ApiToken", read from the stack's secret. The stacks,
// and what they retain, are deleted when the test ends.
func deployExamples(t *testing.T, ctx context.Context, prefix string, env ...string) *awsstack.Stack {
	t.Helper()
	s := awsstack.Require(t, prefix)
	s.Up(t, ctx, awsstack.Examples, append(awsstack.WorldOutputs, "ApiUrl", "ApiTokenSecret", "FlightUrl"), append([]string{"STACK_PARAMETERS=" + testParameters}, env...)...)
	secret, err := secretsmanager.NewFromConfig(emulator.Config()).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(s.Outputs["ApiTokenSecret"])})
	if err != nil || aws.ToString(secret.SecretString) == "" {
		t.Fatalf("the API's token in %s: %v", s.Outputs["ApiTokenSecret"], err)
	}
	s.Outputs["ApiToken"] = *secret.SecretString
	return s
}

// testParameters are the test stacks' parameters: timers past
// scheduleAfter wake through the scheduler (longsleep_test.go), and the
// dead-letter alarm notifies alarmTopic.
var testParameters = fmt.Sprintf("ScheduleAfterSeconds=%d AlarmTopicArn=%s", int(scheduleAfter.Seconds()), alarmTopic)

// alarmTopic stands for an SNS topic: MiniStack's CloudWatch does not
// check that an alarm's actions exist.
const alarmTopic = "arn:aws:sns:us-east-1:000000000000:workflow-test-alarms"

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
