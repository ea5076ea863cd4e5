package flowhandler

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// handoffSource marks a record one version of the flow function handed to
// another, in place of the "aws:sqs" of the event source mapping's.
const handoffSource = "workflow:handoff"

// Handoff delivers a queue message to the deployment its run is pinned to.
type Handoff interface {
	// HandOff gives record to deployment. A nil error means the
	// deployment has it, durably: the caller acknowledges its own copy.
	HandOff(ctx context.Context, deployment string, record events.SQSMessage) error
}

// Invoker is the part of the Lambda client a LambdaHandoff needs.
type Invoker interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// LambdaHandoff hands records to published versions of the named function
// (the flow function itself: AWS_LAMBDA_FUNCTION_NAME). It invokes the
// version asynchronously (InvocationType Event) with the record in an
// SQS event: the version's own handler takes it as it takes the queue's,
// and Lambda has queued the event durably once Invoke returns, so the
// caller neither waits for the other version's run nor loses the message.
type LambdaHandoff struct {
	Client   Invoker
	Function string
}

// HandOff implements Handoff.
func (h LambdaHandoff) HandOff(ctx context.Context, deployment string, record events.SQSMessage) error {
	record.EventSource = handoffSource
	payload, err := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{record}})
	if err != nil {
		return err
	}
	_, err = h.Client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(h.Function),
		Qualifier:      aws.String(deployment),
		InvocationType: types.InvocationTypeEvent,
		Payload:        payload,
	})
	if err != nil {
		return fmt.Errorf("hand the message over to version %s of %s: %w", deployment, h.Function, err)
	}
	return nil
}
