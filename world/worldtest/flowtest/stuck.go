package flowtest

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// A run must never stay unfinished with nothing to move it. The stuck-run
// scenarios lose a run's message for real (received from the World's
// queue and acknowledged unprocessed, as a dead-lettered or never-sent
// message is gone) and hold Worker.CheckStuck to its promise: it re-queues
// the run once, fails it with ErrRunStuck if that does not move it, and
// leaves alone a run waiting for a hook, however long, and a sleeping run
// until its timer is overdue by the threshold. No worker serves the queue
// in these scenarios: the test delivers each message itself, and moves the
// check's clock instead of waiting.
var stuckScenarios = []struct {
	name string
	run  func(t *testing.T, e *stuckEnv)
}{
	{"StuckRunIsRequeued", stuckRunIsRequeued},
	{"StuckRunFailsIfRequeueDoesNotHelp", stuckRunFails},
	{"HookWaitIsNeverStuck", hookWaitIsNeverStuck},
	{"SleepIsStuckOnlyWhenOverdue", sleepIsStuckOnlyWhenOverdue},
}

// stuckAfter is the scenarios' threshold; the clock jumps past it.
const stuckAfter = time.Minute

var stuckStep = workflow.DefineStep("flowtest.stuck.step", func(_ context.Context, n int) (int, error) { return n + 1, nil })

var stepOnce = workflow.Define("flowtest.stuck.stepOnce", func(ctx workflow.Context, n int) (int, error) {
	return stuckStep.Call(ctx, n)
})

var nap = workflow.Define("flowtest.stuck.nap", func(ctx workflow.Context, d time.Duration) (string, error) {
	workflow.Sleep(ctx, d)
	return "woke", nil
})

// stuckEnv is a scenario's World and client with a worker that serves no
// queue and runs on a clock the scenario moves.
type stuckEnv struct {
	*env
	t      *testing.T
	offset atomic.Int64 // added to the wall clock, in nanoseconds
	worker *workflow.Worker
}

func newStuckEnv(t *testing.T, w world.World) *stuckEnv {
	ctx, cancel := context.WithTimeout(t.Context(), scenarioBound)
	t.Cleanup(cancel)
	log := &testLog{t: t}
	t.Cleanup(log.stop)
	e := &stuckEnv{env: &env{ctx: ctx, world: w, client: workflow.NewClient(w), log: slog.New(slog.NewTextHandler(log, nil))}, t: t}
	e.worker = workflow.NewWorker(w, workflow.WorkerOptions{
		Logger: e.log, StuckAfter: stuckAfter, InlineWait: -1,
		Clock: func() time.Time { return time.Now().Add(time.Duration(e.offset.Load())) },
	})
	return e
}

// later moves the worker's clock d on.
func (e *stuckEnv) later(d time.Duration) { e.offset.Add(int64(d)) }

// next receives the next message for runID. A message for another run
// (a World shared with earlier scenarios) is delivered to the worker.
func (e *stuckEnv) next(runID string) world.Delivery {
	e.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		d, err := e.world.Receive(ctx, time.Minute)
		cancel()
		if err != nil {
			e.t.Fatalf("no message for run %s: %v", runID, err)
		}
		if d.RunID == runID {
			return d
		}
		_ = e.worker.Handle(e.ctx, d)
	}
}

// deliver hands the next message for runID to the worker.
func (e *stuckEnv) deliver(runID string) {
	e.t.Helper()
	if err := e.worker.Handle(e.ctx, e.next(runID)); err != nil {
		e.t.Fatalf("processing run %s: %v", runID, err)
	}
}

// lose takes the next message for runID off the queue unprocessed.
func (e *stuckEnv) lose(runID string) {
	e.t.Helper()
	if err := e.world.Ack(e.ctx, e.next(runID)); err != nil {
		e.t.Fatalf("dropping the message of run %s: %v", runID, err)
	}
}

// check runs the stuck-run check and reports what it did to runID.
func (e *stuckEnv) check(runID string) (requeued, failed bool) {
	e.t.Helper()
	report, err := e.worker.CheckStuck(e.ctx, 0)
	if err != nil {
		e.t.Fatalf("CheckStuck: %v", err)
	}
	return slices.Contains(report.Requeued, runID), slices.Contains(report.Failed, runID)
}

// wantCheck fails the scenario unless the check does to runID what it
// should.
func (e *stuckEnv) wantCheck(runID string, requeue, fail bool, when string) {
	e.t.Helper()
	if r, f := e.check(runID); r != requeue || f != fail {
		e.t.Fatalf("%s: the check re-queued the run: %v, failed it: %v; want %v, %v", when, r, f, requeue, fail)
	}
}

func stuckRunIsRequeued(t *testing.T, e *stuckEnv) {
	run := start(t, e.env, stepOnce, 1)
	e.lose(run.ID) // the start's message
	e.wantCheck(run.ID, false, false, "right after the message was lost")
	e.later(stuckAfter + time.Second)
	e.wantCheck(run.ID, true, false, "a threshold after the message was lost")
	e.deliver(run.ID)
	if got := result(t, e.env, run); got != 2 {
		t.Fatalf("the re-queued run returned %d, want 2", got)
	}
	e.later(3 * stuckAfter)
	e.wantCheck(run.ID, false, false, "once the run ended")
}

func stuckRunFails(t *testing.T, e *stuckEnv) {
	token := unique("stuck")
	run := startHold(t, e.env, token, false)
	e.deliver(run.ID) // it claims the token and waits
	if err := workflow.ResumeHook(e.ctx, e.client, token, "lost"); err != nil {
		t.Fatal(err)
	}
	e.lose(run.ID) // the resume's message
	e.later(stuckAfter + time.Second)
	e.wantCheck(run.ID, true, false, "a threshold after the resume's message was lost")
	e.lose(run.ID) // the re-queued message, too
	e.wantCheck(run.ID, false, false, "right after the re-queue")
	e.later(stuckAfter + time.Second)
	e.wantCheck(run.ID, false, true, "a threshold after the re-queued message was lost")
	if _, err := run.Result(e.ctx); !errors.Is(err, workflow.ErrRunStuck) {
		t.Fatalf("the stuck run's result: %v, want ErrRunStuck", err)
	}
	if status, err := run.Status(e.ctx); err != nil || status != workflow.StatusFailed {
		t.Fatalf("the stuck run's status: %v, %v; want failed", status, err)
	}
	// Its token was released before the end was written.
	e.deliver(run.ID) // the end's message: streams closed, nothing else
	claim := start(t, e.env, claimer, token)
	e.deliver(claim.ID)
	if got := result(t, e.env, claim); got != "claimed" {
		t.Fatalf("a run after the stuck one: %s, want the token free", got)
	}
}

func hookWaitIsNeverStuck(t *testing.T, e *stuckEnv) {
	token := unique("wait")
	run := startHold(t, e.env, token, false)
	e.deliver(run.ID)
	e.later(30 * 24 * time.Hour)
	e.wantCheck(run.ID, false, false, "a run waiting for a hook for 30 days")
	if err := workflow.ResumeHook(e.ctx, e.client, token, "late"); err != nil {
		t.Fatal(err)
	}
	e.deliver(run.ID)
	if got := result(t, e.env, run); got != "got late" {
		t.Fatalf("the waiting run got %q", got)
	}
}

func sleepIsStuckOnlyWhenOverdue(t *testing.T, e *stuckEnv) {
	run := start(t, e.env, nap, time.Hour)
	e.deliver(run.ID) // it sleeps; its wake-up waits in the queue for an hour
	e.later(time.Hour + stuckAfter/2)
	e.wantCheck(run.ID, false, false, "a sleeping run, half a threshold past its wake-up")
	e.later(stuckAfter)
	e.wantCheck(run.ID, true, false, "a sleeping run a threshold past its wake-up, which never came")
	e.deliver(run.ID)
	if got := result(t, e.env, run); got != "woke" {
		t.Fatalf("the re-queued sleeper returned %q", got)
	}
}
