package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// Replaying must catch drift: the golden logs, replayed against changed
// versions of their workflows (defined under other names, the log's
// run_created pointed at them), or with their events changed, fail the
// way a worker would fail the run.

// goldenSleepReordered sleeps before its first step instead of after.
var goldenSleepReordered = workflow.Define("golden.sleep.reordered", func(ctx workflow.Context, _ struct{}) (int, error) {
	workflow.Sleep(ctx, 24*time.Hour)
	return goldenDouble.Call(ctx, workflow.Now(ctx).Hour())
})

// goldenRetryExtended calls one more step before it returns.
var goldenRetryExtended = workflow.Define("golden.retry.extended", func(ctx workflow.Context, order string) (string, error) {
	receipt, err := goldenFlaky.Call(ctx, order)
	if err != nil {
		return "", err
	}
	_, err = goldenDouble.Call(ctx, len(receipt))
	return receipt, err
})

// goldenRetryRetyped takes a number where the log holds an order ID.
var goldenRetryRetyped = workflow.Define("golden.retry.retyped", func(ctx workflow.Context, order int) (string, error) {
	return goldenFlaky.Call(ctx, strconv.Itoa(order))
})

func TestReplayNamesTheSlotACallNoLongerMatches(t *testing.T) {
	events := readGolden(t, filepath.Join(goldenDir, "golden-sleep.json"))
	nd := replayNondeterminism(t, replayedAs(t, events, goldenSleepReordered.Name()))
	if want := slotOf(t, events, world.StepCreated, "1"); nd.Slot != want {
		t.Errorf("error names slot %d, want %d (the first step_created): %v", nd.Slot, want, nd)
	}
	if !strings.Contains(nd.Expected, `"golden.double"`) || !strings.Contains(nd.Found, "sleep(24h0m0s) at ") ||
		!strings.Contains(nd.Found, "golden_drift_test.go:") {
		t.Errorf("error does not name the recorded step and the call made instead, with its line: %v", nd)
	}
}

func TestReplayCatchesACallAddedAtTheEnd(t *testing.T) {
	events := readGolden(t, filepath.Join(goldenDir, "golden-retry.json"))
	nd := replayNondeterminism(t, replayedAs(t, events, goldenRetryExtended.Name()))
	if want := slotOf(t, events, world.RunCompleted, ""); nd.Slot != want {
		t.Errorf("error names slot %d, want %d (run_completed): %v", nd.Slot, want, nd)
	}
	if !strings.Contains(nd.Found, `step "golden.double" at `) || !strings.Contains(nd.Found, "call #2") {
		t.Errorf("error does not name the added call: %v", nd)
	}
}

func TestReplayCatchesAnInputThatNoLongerDecodes(t *testing.T) {
	events := readGolden(t, filepath.Join(goldenDir, "golden-retry.json"))
	nd := replayNondeterminism(t, replayedAs(t, events, goldenRetryRetyped.Name()))
	if want := slotOf(t, events, world.StepCreated, "1"); nd.Slot != want || !strings.Contains(nd.Found, "returned an error after 0 durable calls") ||
		!strings.Contains(nd.Found, "decoding input") {
		t.Errorf("error does not say the input no longer decodes: %v", nd)
	}
}

// A payload whose format changed under the code is a decode error naming
// the event, not a silent misreading.
func TestReplayCatchesAPayloadThatNoLongerDecodes(t *testing.T) {
	events := readGolden(t, filepath.Join(goldenDir, "golden-retry.json"))
	slot := slotOf(t, events, world.StepRetrying, "1")
	events[slot-1].Payload = json.RawMessage(`{"attempt":"one","error":{"message":"timeout"}}`)
	err := workflow.Replay(context.Background(), encode(t, events))
	if want := fmt.Sprintf("corrupted event log: slot %d (step_retrying)", slot); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("replay: %v, want a decode error naming slot %d", err, slot)
	}
}

// A newer version of the code may record more in an event (which worker
// ran a step, say); this code must still read the log.
func TestReplayIgnoresFieldsItDoesNotKnow(t *testing.T) {
	events := readGolden(t, filepath.Join(goldenDir, "golden-retry.json"))
	for i, ev := range events {
		if len(ev.Payload) > 0 {
			events[i].Payload = json.RawMessage(strings.TrimSuffix(string(ev.Payload), "}") + `,"addedLater":{"owner":"w-9"}}`)
		}
	}
	if err := workflow.Replay(context.Background(), encode(t, events)); err != nil {
		t.Fatalf("replay with unknown fields: %v", err)
	}
}

func TestReplayRefusesALogThatIsNotOne(t *testing.T) {
	for _, log := range []string{``, `{}`, `[]`, `[{"slot":1,"type":"step_created"}]`} {
		if err := workflow.Replay(context.Background(), []byte(log)); err == nil {
			t.Errorf("replay of %q succeeded", log)
		}
	}
}

func replayNondeterminism(t *testing.T, log []byte) *workflow.NondeterminismError {
	t.Helper()
	err := workflow.Replay(context.Background(), log)
	nd, ok := errors.AsType[*workflow.NondeterminismError](err)
	if !ok {
		t.Fatalf("replay: %v, want a NondeterminismError", err)
	}
	return nd
}

// replayedAs is the log with its run_created pointed at another workflow.
func replayedAs(t *testing.T, events []world.Event, workflowName string) []byte {
	t.Helper()
	var created map[string]any
	if err := json.Unmarshal(events[0].Payload, &created); err != nil {
		t.Fatal(err)
	}
	created["workflow"] = workflowName
	events[0].Payload = encode(t, created)
	return encode(t, events)
}

func slotOf(t *testing.T, events []world.Event, typ world.EventType, correlationID string) int64 {
	t.Helper()
	for _, ev := range events {
		if ev.Type == typ && ev.CorrelationID == correlationID {
			return ev.Slot
		}
	}
	t.Fatalf("the golden log has no %s for call %q", typ, correlationID)
	return 0
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// siteCalls make one durable call of each kind, each noting its line in
// siteLine first.
var (
	siteLine  int
	siteCalls = map[string]func(ctx workflow.Context){
		"step":       func(ctx workflow.Context) { siteLine = here(); _, _ = goldenDouble.Call(ctx, 1) },
		"step go":    func(ctx workflow.Context) { siteLine = here(); goldenDouble.Go(ctx, 1) },
		"sleep":      func(ctx workflow.Context) { siteLine = here(); workflow.Sleep(ctx, time.Second) },
		"after":      func(ctx workflow.Context) { siteLine = here(); workflow.After(ctx, time.Second) },
		"child":      func(ctx workflow.Context) { siteLine = here(); goldenRetry.StartChild(ctx, "x") },
		"attributes": func(ctx workflow.Context) { siteLine = here(); _ = workflow.SetAttributes(ctx, nil) },
		"hook":       func(ctx workflow.Context) { siteLine = here(); workflow.CreateHook[string](ctx) },
		"hook def":   func(ctx workflow.Context) { siteLine = here(); goldenApprovals.Create(ctx) },
		"responding": func(ctx workflow.Context) { siteLine = here(); workflow.CreateRespondingHook[string, string](ctx) },
		"resp. def":  func(ctx workflow.Context) { siteLine = here(); goldenQuotes.Create(ctx) },
		"webhook":    func(ctx workflow.Context) { siteLine = here(); workflow.CreateWebhook(ctx) },
	}
)

var goldenSites = workflow.Define("golden.sites", func(ctx workflow.Context, kind string) (struct{}, error) {
	siteCalls[kind](ctx)
	return struct{}{}, nil
})

func here() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

// Each kind of durable call names its own line in the error, also when a
// helper of the workflow makes it.
func TestReplayNamesTheLineOfEachKindOfCall(t *testing.T) {
	for kind := range siteCalls {
		t.Run(kind, func(t *testing.T) {
			events := []world.Event{
				{RunID: "sites", Slot: 1, Type: world.RunCreated, Payload: encode(t, map[string]any{"workflow": goldenSites.Name(), "input": kind})},
				{RunID: "sites", Slot: 2, Type: world.StepCreated, CorrelationID: "1", Payload: json.RawMessage(`{"step":"golden.never"}`)},
			}
			nd := replayNondeterminism(t, encode(t, events))
			if want := fmt.Sprintf(" at golden_drift_test.go:%d", siteLine); !strings.Contains(nd.Found, want) {
				t.Errorf("error does not name the call's line (%s): %v", want, nd)
			}
		})
	}
}
