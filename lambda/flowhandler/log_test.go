package flowhandler

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/lambda/lambdalog"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// TestHandlerLogsJSONWithTheRequestID drives a run through the handler as
// Lambda would, with the logger Start installs: every line is JSON, and
// the run's lines name the invocation's request ID beside the run.
func TestHandlerLogsJSONWithTheRequestID(t *testing.T) {
	w := memory.New()
	c := workflow.NewClient(w)
	if _, err := workflow.Start(t.Context(), c, doubler, 21, workflow.WithRunID("run-logged")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Logger: lambdalog.New(&out)})
	ctx := lambdacontext.NewContext(t.Context(), &lambdacontext.LambdaContext{AwsRequestID: "req-42"})
	if _, err := Handler(worker, &deliveries{}, nil)(ctx, events.SQSEvent{Records: []events.SQSMessage{record("m1", "run-logged")}}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if m["run_id"] == "run-logged" && m[lambdalog.RequestID] == "req-42" {
			seen[m["msg"].(string)] = true
		}
	}
	for _, msg := range []string{"workflow: run started", "workflow: run completed"} {
		if !seen[msg] {
			t.Errorf("no line %q with run_id and aws_request_id in:\n%s", msg, out.String())
		}
	}
}
