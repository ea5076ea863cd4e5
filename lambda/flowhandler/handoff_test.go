package flowhandler

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var waiter = workflow.Define("flowtest.waiter", func(ctx workflow.Context, token string) (string, error) {
	return workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
})

// versions routes Invoke as Lambda does: to the handler of the qualified
// version, with the payload as its event. It records what it was asked.
type versions struct {
	handlers map[string]func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	calls    []*lambda.InvokeInput
	down     bool
}

func (v *versions) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	v.calls = append(v.calls, in)
	if v.down {
		return nil, errors.New("throttled")
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(in.Payload, &ev); err != nil {
		return nil, err
	}
	if _, err := v.handlers[*in.Qualifier](ctx, ev); err != nil {
		return nil, err
	}
	return &lambda.InvokeOutput{StatusCode: 202}, nil
}

func TestAVersionHandsARunPinnedToAnotherOverToIt(t *testing.T) {
	ctx := t.Context()
	w := memory.New()
	c := workflow.NewClient(w)
	run, err := workflow.Start(ctx, c, waiter, "handoff:1", workflow.WithRunID("run-pinned"))
	if err != nil {
		t.Fatal(err)
	}
	lambdas := &versions{}
	d := &deliveries{}
	handoff := LambdaHandoff{Client: lambdas, Function: "flow"}
	v1 := Handler(workflow.NewWorker(w, workflow.WorkerOptions{Deployment: "1"}), d, handoff)
	v2 := Handler(workflow.NewWorker(w, workflow.WorkerOptions{Deployment: "2"}), d, handoff)
	lambdas.handlers = map[string]func(context.Context, events.SQSEvent) (events.SQSEventResponse, error){"1": v1, "2": v2}
	if resp, err := v1(ctx, events.SQSEvent{Records: []events.SQSMessage{record("m1", run.ID)}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("version 1 starting the run: %+v, %v", resp, err)
	}
	if err := workflow.ResumeHook(ctx, c, "handoff:1", "done on 1"); err != nil {
		t.Fatal(err)
	}

	// The alias now points to version 2: the hand-off fails first.
	lambdas.down = true
	if resp, err := v2(ctx, events.SQSEvent{Records: []events.SQSMessage{record("m2", run.ID)}}); err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a failed hand-off: %+v, %v; want the message reported failed, to come back", resp, err)
	}
	if st, _ := run.Status(ctx); st != workflow.StatusRunning {
		t.Fatalf("version 2 touched the run pinned to 1: %s", st)
	}
	lambdas.down = false
	if resp, err := v2(ctx, events.SQSEvent{Records: []events.SQSMessage{record("m2", run.ID)}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a hand-off: %+v, %v; want the message acknowledged", resp, err)
	}
	if got, err := run.Result(ctx); err != nil || got != "done on 1" {
		t.Fatalf("the handed-over run: %q, %v", got, err)
	}
	last := lambdas.calls[len(lambdas.calls)-1]
	if *last.Qualifier != "1" || *last.FunctionName != "flow" || last.InvocationType != types.InvocationTypeEvent {
		t.Errorf("Invoke %s:%s as %s; want flow:1 as Event", *last.FunctionName, *last.Qualifier, last.InvocationType)
	}

	// A version handed a message it will not run puts it back on the
	// queue rather than passing it on again.
	other, err := workflow.Start(ctx, c, waiter, "handoff:2", workflow.WithRunID("run-other"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v1(ctx, events.SQSEvent{Records: []events.SQSMessage{record("m3", other.ID)}}); err != nil {
		t.Fatal(err)
	}
	calls := len(lambdas.calls)
	handed := record("m4", other.ID)
	handed.EventSource = handoffSource
	if _, err := v2(ctx, events.SQSEvent{Records: []events.SQSMessage{handed}}); err != nil {
		t.Fatal(err)
	}
	if len(lambdas.calls) != calls || len(d.enqueued) != 1 || d.enqueued[0] != other.ID {
		t.Errorf("a handed-over message pinned elsewhere: %d more invokes, enqueued %v; want none and [%s]", len(lambdas.calls)-calls, d.enqueued, other.ID)
	}
}
