package agent_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/internal/testrig/spanrecorder"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// lookup handles its backend's failure with a fallback, and reports it.
var lookup = agent.NewTool("lookup", "Look a fare up", func(ctx context.Context, in struct{ Route string }, call agent.ToolCallInfo) (string, error) {
	agent.ReportError(ctx, errors.New("fare service timed out"))
	return "about $300", nil
})

var lookupFlow = workflow.Define("agent.test.lookup", func(ctx workflow.Context, route string) (string, error) {
	fare, err := lookup.Call(ctx, struct{ Route string }{route}, agent.ToolCallInfo{ID: "l1", Name: "lookup"})
	agent.ReportWorkflowError(ctx, errors.New("cache miss"))
	return fare, err
})

// TestReportErrorRecordsWithoutChangingControlFlow: the tool's report is
// an exception and a reported-error event on its step's span, whose
// status stays unset; the workflow's report is recorded once by a step;
// both are handled error parts on the stream; the run goes on.
func TestReportErrorRecordsWithoutChangingControlFlow(t *testing.T) {
	spans := new(spanrecorder.Recorder)
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(spans)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	env := workflowtest.New(t)
	run := workflowtest.Start(env, lookupFlow, "SFO-JFK")
	if fare, err := run.Result(); err != nil || fare != "about $300" {
		t.Fatalf("result %q, %v", fare, err)
	}
	reported := map[string]bool{}
	for _, s := range spans.Ended() {
		for _, e := range s.Events() {
			if e.Name != agent.ReportedErrorEvent {
				continue
			}
			for _, a := range e.Attributes {
				if a.Key == "exception.message" {
					reported[s.Name()+": "+a.Value.AsString()] = true
				}
			}
			if code, desc := s.Status(); code == codes.Error {
				t.Errorf("span %s has status %v %q", s.Name(), code, desc)
			}
		}
	}
	for _, want := range []string{"workflow.step agent.tool.lookup: fare service timed out", "workflow.step agent.report-error: cache miss"} {
		if !reported[want] {
			t.Errorf("no report %q among %v", want, reported)
		}
	}
	var handled []string
	for _, p := range readAllParts(t, run.Run) {
		if p.Type == agent.PartError && p.Handled {
			handled = append(handled, p.Error)
		}
	}
	if strings.Join(handled, "; ") != "fare service timed out; cache miss" {
		t.Fatalf("the stream reports %q", handled)
	}
}

// TestAgentDoesNotImportTheOpenTelemetrySDK: reporting goes through the
// OpenTelemetry API, which is a no-op until a program installs the SDK.
func TestAgentDoesNotImportTheOpenTelemetrySDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/lambdaworkflow/workflow/agent").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") {
			t.Errorf("package agent depends on %s", dep)
		}
	}
}
