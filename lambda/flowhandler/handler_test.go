package flowhandler

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var double = workflow.DefineStep("flowtest.double", func(ctx context.Context, n int) (int, error) { return 2 * n, nil })

var doubler = workflow.Define("flowtest.doubler", func(ctx workflow.Context, n int) (int, error) {
	return double.Call(ctx, n)
})

// flaky is a World whose reads of one run fail, as DynamoDB's can.
type flaky struct {
	*memory.World
	broken string
}

func (f flaky) GetRun(ctx context.Context, id string) (world.Run, error) {
	if id == f.broken {
		return world.Run{}, errors.New("throttled")
	}
	return f.World.GetRun(ctx, id)
}

// deliveries records Delivered, Enqueue and early requeue calls and
// fails the deliveries of one run.
type deliveries struct {
	mu       sync.Mutex
	got      []string
	enqueued []string
	requeued []string
	broken   string
}

// RequeueIfEarly requeues a message due later than now, as the AWS World
// does with one due beyond SQS's delay limit.
func (d *deliveries) RequeueIfEarly(_ context.Context, msg world.Message) (bool, error) {
	if !msg.DeliverAt.After(time.Now()) {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.requeued = append(d.requeued, msg.RunID)
	return true, nil
}

func (d *deliveries) Enqueue(_ context.Context, msg world.Message) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.enqueued = append(d.enqueued, msg.RunID)
	return nil
}

func (d *deliveries) Delivered(_ context.Context, msg world.Message) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, msg.RunID)
	if msg.RunID == d.broken {
		return errors.New("dedup marker unreachable")
	}
	return nil
}

func record(id, runID string) events.SQSMessage {
	body, _ := json.Marshal(world.Message{RunID: runID})
	return events.SQSMessage{MessageId: id, Body: string(body)}
}

func TestHandlerReportsOnlyTheMessagesToRedeliver(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	w := flaky{World: mem, broken: "run-unreadable"}
	c := workflow.NewClient(w)
	start := func(id string, n int) {
		if _, err := workflow.Start(ctx, c, doubler, n, workflow.WithRunID(id)); err != nil {
			t.Fatal(err)
		}
	}
	start("run-a", 1)
	start("run-b", 2)
	start("run-undelivered", 3)
	start("run-unreadable", 4) // its CreateRun worked; its reads fail

	d := &deliveries{broken: "run-undelivered"}
	h := Handler(workflow.NewWorker(w, workflow.WorkerOptions{}), d, nil)
	resp, err := h(ctx, events.SQSEvent{Records: []events.SQSMessage{
		record("m1", "run-a"),
		record("m2", "run-b"),
		record("m3", "run-a"), // a duplicate: shares run-a's outcome
		{MessageId: "m4", Body: "not json"},
		record("m5", "run-gone"), // no such run: dropped, not redelivered
		record("m6", "run-undelivered"),
		record("m7", "run-unreadable"),
		record("m8", "run-unreadable"),
	}})
	if err != nil {
		t.Fatalf("handler error %v: a batch failure would redeliver every message", err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	slices.Sort(failed)
	if want := []string{"m4", "m6", "m7", "m8"}; !slices.Equal(failed, want) {
		t.Errorf("failed items %v, want %v", failed, want)
	}
	for id, want := range map[string]int{"run-a": 2, "run-b": 4} {
		run, err := workflow.GetRun[int](ctx, c, id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := run.Result(ctx)
		if err != nil || got != want {
			t.Errorf("%s: result %d, %v; want %d", id, got, err, want)
		}
	}
	if st, _ := mem.GetRun(ctx, "run-undelivered"); st.Status.Terminal() {
		t.Errorf("run-undelivered was processed although its delivery could not be reported")
	}
	if got := strings.Join(d.got, " "); got != "run-a run-b run-a run-gone run-undelivered run-unreadable run-unreadable" {
		t.Errorf("Delivered calls: %s", got)
	}
}

// A batch where nothing failed answers an empty list of failures, never
// null: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
func TestHandlerAnswersAnEmptyListWhenNothingFailed(t *testing.T) {
	w := memory.New()
	if _, err := workflow.Start(t.Context(), workflow.NewClient(w), doubler, 1, workflow.WithRunID("run-ok")); err != nil {
		t.Fatal(err)
	}
	h := Handler(workflow.NewWorker(w, workflow.WorkerOptions{}), &deliveries{}, nil)
	resp, err := h(t.Context(), events.SQSEvent{Records: []events.SQSMessage{record("m1", "run-ok")}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(resp)
	if err != nil || string(got) != `{"batchItemFailures":[]}` {
		t.Errorf("response = %s, %v; want {\"batchItemFailures\":[]}", got, err)
	}
}

// A message that arrives before it is due (a long sleep's hop through the
// queue) is requeued and acknowledged: the run is not processed, and
// the batch reports no failure.
func TestHandlerRequeuesEarlyWakeUps(t *testing.T) {
	w := memory.New()
	c := workflow.NewClient(w)
	if _, err := workflow.Start(t.Context(), c, doubler, 1, workflow.WithRunID("run-early")); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(world.Message{RunID: "run-early", DeliverAt: time.Now().Add(time.Hour)})
	d := &deliveries{}
	h := Handler(workflow.NewWorker(w, workflow.WorkerOptions{}), d, nil)
	resp, err := h(t.Context(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(body)}}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("handler = %+v, %v; want no failure", resp, err)
	}
	if !slices.Equal(d.requeued, []string{"run-early"}) {
		t.Errorf("requeued %v, want [run-early]", d.requeued)
	}
	if run, _ := w.GetRun(t.Context(), "run-early"); run.Status.Terminal() {
		t.Error("the run was processed on an early wake-up")
	}
}
