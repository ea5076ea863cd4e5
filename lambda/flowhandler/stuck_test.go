package flowhandler

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// The schedule's event runs the stuck-run check; every other event is
// still a batch of queue messages.
func TestScheduledEventChecksForStuckRuns(t *testing.T) {
	ctx := t.Context()
	w := memory.New()
	c := workflow.NewClient(w)
	run, err := workflow.Start(ctx, c, doubler, 21)
	if err != nil {
		t.Fatal(err)
	}
	lost, err := w.Receive(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Ack(ctx, lost); err != nil { // the start's message is gone
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Clock: func() time.Time { return later }})
	batches := 0
	h := WithStuckCheck(worker, func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		batches++
		return events.SQSEventResponse{}, nil
	})

	out, err := h(ctx, json.RawMessage(`{"check":"stuck-runs","stuckAfterSeconds":1800}`))
	if err != nil {
		t.Fatalf("the check: %v", err)
	}
	if report, ok := out.(workflow.StuckReport); !ok || len(report.Requeued) != 1 || report.Requeued[0] != run.ID || batches != 0 {
		t.Fatalf("the check answered %+v (and %d batches ran), want the run %s re-queued", out, batches, run.ID)
	}
	requeued, err := w.Receive(ctx, time.Minute)
	if err != nil || requeued.RunID != run.ID {
		t.Fatalf("the queue holds %+v, %v; want the re-queued run's message", requeued, err)
	}

	batch, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{record("m1", run.ID)}})
	if _, err := h(ctx, batch); err != nil || batches != 1 {
		t.Fatalf("a batch of messages: %v, handled %d batches; want 1", err, batches)
	}
}

// The schedule in template.yaml sends the event the handler checks on.
func TestTemplateSchedulesTheCheck(t *testing.T) {
	tmpl, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := `'{"check":"` + checkStuckRuns + `","stuckAfterSeconds":${Visibility}}'`; !strings.Contains(string(tmpl), want) {
		t.Fatalf("template.yaml schedules no stuck-run check: it lacks %s", want)
	}
}
