package aws

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/worldtest/flowtest"
)

// leaseSpy is the AWS World noting the calls made when the lease is
// asked for, and running after (if set) right after its first ReadRun.
type leaseSpy struct {
	*World
	atLease map[string]int64
	once    sync.Once
	after   func()
}

func (w *leaseSpy) AcquireLeaseAt(ctx context.Context, runID string, lease world.Lease, now time.Time) (world.Lease, int64, error) {
	if w.atLease == nil {
		w.atLease = w.Calls()
	}
	return w.World.AcquireLeaseAt(ctx, runID, lease, now)
}

func (w *leaseSpy) ReadRun(ctx context.Context, id string, after int64) (world.Run, []world.Event, []world.InboxMessage, bool, error) {
	run, events, inbox, complete, err := w.World.ReadRun(ctx, id, after)
	if w.after != nil {
		w.once.Do(w.after)
	}
	return run, events, inbox, complete, err
}

// An invocation reads its run and log in one Query before it takes the
// lease, instead of a run read before the lease and a log read after it.
func TestInvocationReadsRunAndLogOnce(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	token := fmt.Sprint("aws-test-read:", time.Now().UnixNano())
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsWaiter, token)
	if err != nil {
		t.Fatal(err)
	}
	spy := &leaseSpy{World: w}
	w.ResetCalls()
	if err := workflow.NewWorker(spy, workflow.WorkerOptions{}).Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	calls := w.Calls()
	t.Logf("AWS calls of an invocation that claims a hook and suspends: %v, %v of them before the lease", calls, spy.atLease)
	if want := map[string]int64{"DynamoDB.Query": 1}; !maps.Equal(spy.atLease, want) {
		t.Errorf("calls before the lease %v, want %v: the run and its log together", spy.atLease, want)
	}
	if n := calls["DynamoDB.Query"]; n != 2 {
		t.Errorf("%d Query, want 2: the run with its log, and its inbox after the release", n)
	}
}

// What another invocation writes between an invocation's read and its
// lease (a step's result, before it released the lease) reaches the
// invocation through the lease's answer and one more Query: the step is
// not run again, and the overtaken invocation writes nothing.
func TestWritesBetweenReadAndLeaseAreRead(t *testing.T) {
	w := newTestWorld(t)
	other, err := New(emulatorConfig(t), w.opts) // another process on the same resources
	if err != nil {
		t.Fatal(err)
	}
	flowtest.RunOvertaking(t, flowtest.Overtaking{
		World:  w,
		Reader: func(after func()) world.World { return &leaseSpy{World: w, after: after} },
		Other:  other,
		Before: w.ResetCalls,
		After: func() {
			calls := w.Calls()
			t.Logf("AWS calls of the invocation whose read the other one overtook: %v", calls)
			if n := calls["DynamoDB.Query"]; n != 3 {
				t.Errorf("%d Query, want 3: the early read, the tail the lease said it missed and the inbox after the release", n)
			}
			if n := calls["DynamoDB.TransactWriteItems"]; n != 0 {
				t.Errorf("%d TransactWriteItems, want none: everything was done already", n)
			}
		},
	})
}

// A log too long for one Query page is not read by ReadRun: the run comes
// back alone for that one request, and the engine reads the log after the
// lease, only if it drives the run.
func TestReadRunOfALongLog(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	if _, err := w.CreateRun(ctx, testRun("long"), []world.Event{testEvent(world.RunCreated, "")}); err != nil {
		t.Fatal(err)
	}
	for slot := int64(2); slot <= 5; slot++ { // 4 × 300 KB: over the 1 MB page
		if _, err := w.AppendEvents(ctx, "long", slot, []world.Event{{Type: world.StepCreated, Payload: bigJSON(300 << 10), CreatedAt: time.Now()}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	w.ResetCalls()
	run, events, _, complete, err := w.ReadRun(ctx, "long", 0)
	if err != nil || complete || events != nil || run.LastSlot != 5 {
		t.Fatalf("ReadRun of a long log: last slot %d, %d events, complete %v, %v; want the run alone at slot 5", run.LastSlot, len(events), complete, err)
	}
	checkCalls(t, w, "ReadRun of a long log", map[string]int64{"DynamoDB.Query": 1})
	if _, events, _, complete, err = w.ReadRun(ctx, "long", 3); err != nil || !complete || len(events) != 2 || events[0].Slot != 4 {
		t.Fatalf("ReadRun of the last two events: %d events, complete %v, %v", len(events), complete, err)
	}
}
