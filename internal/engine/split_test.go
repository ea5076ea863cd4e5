package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// appendRecorder is an in-memory World that notes every append: where it
// went, how many events it held, whether it carried the run's update, and
// the run's status just before it. between, if set, runs after the first
// successful append, as another writer.
type appendRecorder struct {
	*memory.World
	mu      sync.Mutex
	appends []recordedAppend
	between func()
}

type recordedAppend struct {
	from         int64
	events       int
	update       bool
	statusBefore world.RunStatus
	lost         bool // it lost its slot to another writer
}

func (r *appendRecorder) AppendEvents(ctx context.Context, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	run, _ := r.GetRun(ctx, runID)
	missed, err := r.World.AppendEvents(ctx, runID, from, events, update)
	r.mu.Lock()
	r.appends = append(r.appends, recordedAppend{from: from, events: len(events), update: update != nil, statusBefore: run.Status, lost: errors.Is(err, world.ErrSlotTaken)})
	first := len(r.appends) == 1 && err == nil
	r.mu.Unlock()
	if first && r.between != nil {
		r.between()
	}
	return missed, err
}

// fanOut is a workflow that starts n steps at once, then waits for them.
func fanOut(n int, def *StepDef) WorkflowFunc {
	return func(c *Ctx, _ json.RawMessage) (json.RawMessage, error) {
		ops := make([]*Op, n)
		for i := range ops {
			ops[i] = c.CallStep(def, nil, "test")
		}
		for _, op := range ops {
			c.Await(op)
		}
		return nil, nil
	}
}

// A wide fan-out buffers more events than one append may hold: they go in
// appends of at most defaultMaxAppend events, in order, and the run's update
// (here: its start) goes with the last, beside the events that caused it.
func TestAWideBufferIsSplitWithTheUpdateInTheLastAppend(t *testing.T) {
	const steps = 60 // 120 creation events + run_started: two appends
	w := &appendRecorder{World: newMemoryWorld(t)}
	inv := fannedOut(t, w, steps)
	buffered := bufferedTypes(inv)
	if err := inv.flush(); err != nil {
		t.Fatal(err)
	}
	want := []recordedAppend{
		{from: 2, events: defaultMaxAppend, statusBefore: world.StatusPending},
		{from: 2 + defaultMaxAppend, events: 2*steps + 1 - defaultMaxAppend, update: true, statusBefore: world.StatusPending},
	}
	checkAppends(t, w, want)
	checkLog(t, w, inv, append([]world.EventType{world.RunCreated}, buffered...))
}

// bigAppends is an appendRecorder on a World that takes appends of up to
// 392 events, as the AWS World does by packing them.
type bigAppends struct{ *appendRecorder }

func (bigAppends) MaxAppend() int { return 392 }

// A World that says it takes more events in one append gets the wide
// buffer in one.
func TestAWideBufferGoesInOneAppendWhereTheWorldTakesIt(t *testing.T) {
	const steps = 60
	r := &appendRecorder{World: newMemoryWorld(t)}
	inv := fannedOut(t, bigAppends{r}, steps)
	buffered := bufferedTypes(inv)
	if err := inv.flush(); err != nil {
		t.Fatal(err)
	}
	checkAppends(t, r, []recordedAppend{{from: 2, events: 2*steps + 1, update: true, statusBefore: world.StatusPending}})
	checkLog(t, r, inv, append([]world.EventType{world.RunCreated}, buffered...))
}

// Another writer's event between two parts of a split buffer makes the
// next part lose its slot: it is written after that event instead, still
// with the update.
func TestASplitBufferLosingASlotWritesTheRestAfterTheOtherWriter(t *testing.T) {
	const steps = 60
	w := &appendRecorder{World: newMemoryWorld(t)}
	w.between = func() { // a duplicate invocation finished step 1
		appendEvents(t, w.World, 2+defaultMaxAppend, nil, completed("1", "theirs"))
	}
	inv := fannedOut(t, w, steps)
	buffered := bufferedTypes(inv)
	if err := inv.flush(); err != nil {
		t.Fatal(err)
	}
	rest := 2*steps + 1 - defaultMaxAppend
	checkAppends(t, w, []recordedAppend{
		{from: 2, events: defaultMaxAppend, statusBefore: world.StatusPending},
		{from: 2 + defaultMaxAppend, events: rest, update: true, statusBefore: world.StatusPending, lost: true},
		{from: 3 + defaultMaxAppend, events: rest, update: true, statusBefore: world.StatusPending},
	})
	want := append([]world.EventType{world.RunCreated}, buffered[:defaultMaxAppend]...)
	want = append(append(want, world.StepCompleted), buffered[defaultMaxAppend:]...)
	checkLog(t, w, inv, want)
	if op := inv.ops[0]; !op.done || string(op.output) != `"theirs"` {
		t.Errorf("step 1 is done %v with %s, want the other writer's result", op.done, op.output)
	}
}

// fannedOut returns an invocation of a run fanning out to n steps that
// never finish, with the creation events of all of them buffered.
func fannedOut(t *testing.T, w world.World, n int) *invocation {
	t.Helper()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	wait := &StepDef{Name: "s", Fn: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		<-release
		return nil, nil
	}}
	e := newTestEngine(w, fanOut(n, wait))
	startTestRun(t, w)
	inv := replayed(t, e)
	if err := inv.materialize(); err != nil {
		t.Fatal(err)
	}
	if len(inv.out.pending) != 2*n+1 {
		t.Fatalf("%d events buffered, want %d", len(inv.out.pending), 2*n+1)
	}
	return inv
}

func bufferedTypes(inv *invocation) []world.EventType {
	var types []world.EventType
	for _, p := range inv.out.pending {
		types = append(types, p.ev.Type)
	}
	return types
}

func checkAppends(t *testing.T, w *appendRecorder, want []recordedAppend) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.appends) != len(want) {
		t.Fatalf("appends: %+v, want %+v", w.appends, want)
	}
	for i, got := range w.appends {
		if got != want[i] {
			t.Errorf("append %d: %+v, want %+v", i+1, got, want[i])
		}
	}
}

// checkLog checks the log's event types in slot order, that the
// invocation applied all of it, and that the run's update arrived.
func checkLog(t *testing.T, w world.World, inv *invocation, want []world.EventType) {
	t.Helper()
	events, err := w.Events(context.Background(), testRunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != len(want) {
		t.Fatalf("log has %d events, want %d", len(events), len(want))
	}
	for i, ev := range events {
		if ev.Slot != int64(i+1) || ev.Type != want[i] {
			t.Fatalf("slot %d holds %s (slot %d), want %s", i+1, ev.Type, ev.Slot, want[i])
		}
	}
	if inv.lastSlot.Load() != int64(len(want)) || len(inv.out.pending) != 0 || inv.out.update != nil {
		t.Errorf("after the flush: last slot %d, %d events and update %v still buffered", inv.lastSlot.Load(), len(inv.out.pending), inv.out.update)
	}
	if run, _ := w.GetRun(context.Background(), testRunID); run.Status != world.StatusRunning || run.LastSlot != int64(len(want)) {
		t.Errorf("run is %s at slot %d, want running at %d", run.Status, run.LastSlot, len(want))
	}
}
