package flowhandler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var charge = workflow.DefineStep("flowtest.charge", func(ctx context.Context, _ int) (int, error) {
	return 0, errors.New("card declined")
}, workflow.WithMaxRetries(1), workflow.WithBackoff(func(int) time.Duration { return time.Millisecond }))

var checkout = workflow.Define("flowtest.checkout", func(ctx workflow.Context, n int) (int, error) {
	return charge.Call(ctx, n)
})

// TestHandlerLogsJSONWithTheRequestID drives a run that completes and one
// whose step is retried and then fails the run through the handler, as
// Lambda would, with the logger Start installs: every line is JSON, and
// each line the on-call engineer looks for names the invocation's request
// ID beside the run, at its level.
func TestHandlerLogsJSONWithTheRequestID(t *testing.T) {
	w := memory.New()
	c := workflow.NewClient(w)
	if _, err := workflow.Start(t.Context(), c, doubler, 21, workflow.WithRunID("run-logged")); err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.Start(t.Context(), c, checkout, 1, workflow.WithRunID("run-declined")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Logger: lambdalog.New(&out)})
	ctx := lambdacontext.NewContext(t.Context(), &lambdacontext.LambdaContext{AwsRequestID: "req-42"})
	batch := events.SQSEvent{Records: []events.SQSMessage{record("m1", "run-logged"), record("m2", "run-declined")}}
	if _, err := Handler(worker, &deliveries{}, nil)(ctx, batch); err != nil {
		t.Fatal(err)
	}
	levels := map[string]string{} // run ID and message: level
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if m[lambdalog.RequestID] == "req-42" && m["workflow"] != nil {
			levels[m["run_id"].(string)+" "+m["msg"].(string)] = m["level"].(string)
		}
	}
	for line, level := range map[string]string{
		"run-logged workflow: run started":                     "INFO",
		"run-logged workflow: run completed":                   "INFO",
		"run-declined workflow: step attempt failed; retrying": "WARN",
		"run-declined workflow: step failed; no retries left":  "ERROR",
		"run-declined workflow: run failed":                    "ERROR",
	} {
		if levels[line] != level {
			t.Errorf("%q: logged at %q with aws_request_id and workflow, want %s, in:\n%s", line, levels[line], level, out.String())
		}
	}
}
