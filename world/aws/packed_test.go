package aws

import (
	"fmt"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// A 64-branch join's 192 events are one transaction: packed two to an
// item, they read back in order from every slot, through Events and
// ReadRun, with a payload too large for its share of an item in S3. The
// run's first events, written one to an item, read on beside them.
func TestALargeAppendIsOneTransaction(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	if _, err := w.CreateRun(ctx, testRun("wide"), []world.Event{testEvent(world.RunCreated, "")}); err != nil {
		t.Fatal(err)
	}
	events := make([]world.Event, 192)
	for i := range events {
		events[i] = testEvent(world.StepCompleted, fmt.Sprintf(`{"branch":%d}`, i))
		events[i].CorrelationID = fmt.Sprint("step-", i)
	}
	big := string(bigJSON(eventBlobLimit / 2))
	events[100].Payload = []byte(big)
	w.ResetCalls()
	if _, err := w.AppendEvents(ctx, "wide", 2, events, nil); err != nil {
		t.Fatal(err)
	}
	if n := w.Calls()["DynamoDB.TransactWriteItems"]; n != 1 {
		t.Errorf("%d TransactWriteItems for 192 events, want 1", n)
	}
	for _, after := range []int64{0, 1, 2, 3, 100, 101, 102, 192, 193} {
		got, err := w.Events(ctx, "wide", after)
		if err != nil {
			t.Fatal(err)
		}
		_, early, _, complete, err := w.ReadRun(ctx, "wide", after)
		if err != nil || !complete {
			t.Fatalf("ReadRun after %d: complete %v, %v", after, complete, err)
		}
		for name, evs := range map[string][]world.Event{"Events": got, "ReadRun": early} {
			if want := 193 - after; int64(len(evs)) != want {
				t.Fatalf("%s after %d: %d events, want %d", name, after, len(evs), want)
			}
			for i, ev := range evs {
				slot := after + 1 + int64(i)
				if ev.Slot != slot || ev.RunID != "wide" {
					t.Fatalf("%s after %d: event %d at slot %d of %q, want slot %d", name, after, i, ev.Slot, ev.RunID, slot)
				}
				if slot == 1 {
					continue
				}
				if want := events[slot-2]; ev.CorrelationID != want.CorrelationID || string(ev.Payload) != string(want.Payload) {
					t.Fatalf("%s after %d: slot %d holds %s %.40s, want %s %.40s", name, after, slot, ev.CorrelationID, ev.Payload, want.CorrelationID, want.Payload)
				}
			}
		}
	}
	// The next append finds the log head past the packed items.
	if _, err := w.AppendEvents(ctx, "wide", 194, []world.Event{testEvent(world.StepCreated, "")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendEvents(ctx, "wide", 100, []world.Event{testEvent(world.StepCreated, "")}, nil); err == nil {
		t.Fatal("an append at a slot a packed item holds was let in")
	}
}

// An append over what packing fits is refused whole, with a clear error,
// and writes nothing.
func TestAnAppendOverThePackedLimitIsRefused(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	if _, err := w.CreateRun(ctx, testRun("over"), []world.Event{testEvent(world.RunCreated, "")}); err != nil {
		t.Fatal(err)
	}
	events := make([]world.Event, w.MaxAppend()+1)
	for i := range events {
		events[i] = testEvent(world.StepCreated, "")
	}
	if _, err := w.AppendEvents(ctx, "over", 2, events, nil); err == nil {
		t.Fatal("an append of more than MaxAppend events was let in")
	}
	if evs, err := w.Events(ctx, "over", 0); err != nil || len(evs) != 1 {
		t.Fatalf("the log after the refusal: %d events, %v; want the first only", len(evs), err)
	}
}
