package flowtest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// The duration scenarios run a worker whose invocations live at most
// lambdaLife, as a Lambda function's do (WorkerOptions.MaxInvocation):
// each has a budget of lambdaLife less a second's margin, 5 s. The
// lengths are chosen so that a loaded machine only makes the hand-off
// more certain: the first step leaves at most 3 s of the budget, the
// long step declares 3.5 s, and a fresh invocation has 1.5 s to spare
// for its lease, its log read and its replay.
var durationScenarios = []struct {
	name string
	run  func(t *testing.T, e *durationEnv)
}{
	{"HandOffBeforeALongStep", handOffBeforeALongStep},
	{"StepThatFitsNowhereFailsAtOnce", stepThatFitsNowhereFails},
	{"HeartbeatsAreThrottled", heartbeatsAreThrottled},
	{"HeartbeatTimeoutRetriesWithDetails", heartbeatTimeoutRetriesWithDetails},
}

const lambdaLife = 6 * time.Second

// durationEnv is a scenario's env whose worker's invocations live
// lambdaLife, on the World seen through calls, which counts its appends
// and messages per run.
type durationEnv struct {
	*env
	calls *calls
}

func newDurationEnv(t *testing.T, w world.World) *durationEnv {
	t.Helper()
	w, c := watched(t, w)
	return &durationEnv{env: newEnvWith(t, w, workflow.WorkerOptions{MaxInvocation: lambdaLife}, nil), calls: c}
}

type calls struct {
	mu       sync.Mutex
	appends  map[string]int
	messages map[string][]world.Message
}

// watched returns w seen through hooks that count its appends and
// messages.
func watched(t *testing.T, w world.World) (world.World, *calls) {
	t.Helper()
	c := &calls{appends: map[string]int{}, messages: map[string][]world.Message{}}
	return interposed{World: w, appended: c.appended, enqueued: c.enqueued}, c
}

func (c *calls) appended(runID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.appends[runID]++
}

func (c *calls) enqueued(m world.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.messages[m.RunID] = append(c.messages[m.RunID], m)
}

func (c *calls) appendsOf(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.appends[runID]
}

func (c *calls) handoffsOf(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.messages[runID] {
		if strings.Contains(m.DedupKey, "/handoff/") {
			n++
		}
	}
	return n
}

var firstLeg = workflow.DefineStep("flowtest.duration.first", func(ctx context.Context, _ string) (string, error) {
	select {
	case <-time.After(2 * time.Second):
		return "first", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}, workflow.WithTimeout(3*time.Second))

// longLeg declares more than the budget the first leg leaves, and less
// than a whole one; it takes a tenth of a second, and says which attempt
// it was.
var longLeg = workflow.DefineStep("flowtest.duration.long", func(ctx context.Context, _ string) (int, error) {
	time.Sleep(100 * time.Millisecond)
	info, _ := workflow.GetStepInfo(ctx)
	return info.Attempt, nil
}, workflow.WithTimeout(3500*time.Millisecond), workflow.WithMaxRetries(0))

var twoLegs = workflow.Define("flowtest.duration.twoLegs", func(ctx workflow.Context, key string) (int, error) {
	if _, err := firstLeg.Call(ctx, key); err != nil {
		return 0, err
	}
	return longLeg.Call(ctx, key)
})

// handOffBeforeALongStep: a step that does not fit in what is left of the
// invocation starts in a fresh one instead, on its first attempt, and the
// hand-off costs the run one message. Without the rule the step would
// start with less time left than it declares.
func handOffBeforeALongStep(t *testing.T, e *durationEnv) {
	c := e.calls
	run := start(t, e.env, twoLegs, unique("handoff"))
	if got := result(t, e.env, run); got != 1 {
		t.Fatalf("the long step ran as attempt %d, want 1: it was started where it did not fit", got)
	}
	if n := c.handoffsOf(run.ID); n != 1 {
		t.Fatalf("the run was handed off %d times, want once, before the long step", n)
	}
	evs, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == world.StepRetrying || ev.Type == world.StepFailed {
			t.Fatalf("slot %d: %s %s: no attempt should fail", ev.Slot, ev.Type, ev.Payload)
		}
	}
}

var tooLongCalls atomic.Int64

// tooLong declares more than any invocation of the scenario's worker has.
var tooLong = workflow.DefineStep("flowtest.duration.tooLong", func(context.Context, string) (string, error) {
	tooLongCalls.Add(1)
	return "ran", nil
}, workflow.WithTimeout(lambdaLife))

var tooLongRun = workflow.Define("flowtest.duration.tooLongRun", func(ctx workflow.Context, key string) (string, error) {
	return tooLong.Call(ctx, key)
})

// stepThatFitsNowhereFails: a step declaring more than a whole budget
// fails at once, without an attempt or a hand-off, saying what to do.
func stepThatFitsNowhereFails(t *testing.T, e *durationEnv) {
	c := e.calls
	before := tooLongCalls.Load()
	run := start(t, e.env, tooLongRun, unique("too-long"))
	_, err := run.Result(e.ctx)
	if !errors.Is(err, workflow.ErrStepTooLong) {
		t.Fatalf("the run ended with %v, want ErrStepTooLong", err)
	}
	var stepErr *workflow.StepError
	if !errors.As(err, &stepErr) || stepErr.Step != tooLong.Name() {
		t.Fatalf("the run's error %v names no StepError of %q", err, tooLong.Name())
	}
	for _, says := range []string{"split the step", "Worker outside Lambda", "WorkerOptions.LongStepQueue"} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("the error does not say what to do (%q): %v", says, err)
		}
	}
	if n := tooLongCalls.Load() - before; n != 0 {
		t.Fatalf("the step ran %d times, want never", n)
	}
	if n := c.handoffsOf(run.ID); n != 0 {
		t.Fatalf("the run was handed off %d times, want never: no invocation would fit the step", n)
	}
}

// chatty heartbeats far more often than its throttle lets through: every
// 5 ms for 2 s, with a timeout of 1 s (a throttle of 800 ms).
var chatty = workflow.DefineStep("flowtest.duration.chatty", func(ctx context.Context, _ string) (int, error) {
	n := 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); n++ {
		if err := workflow.Heartbeat(ctx, n); err != nil {
			return 0, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	return n, nil
}, workflow.WithHeartbeatTimeout(time.Second))

var chattyRun = workflow.Define("flowtest.duration.chattyRun", func(ctx workflow.Context, key string) (int, error) {
	return chatty.Call(ctx, key)
})

// heartbeatsAreThrottled: hundreds of heartbeats cost a handful of
// appends: the first, then at most one per throttle period, each written
// on its own, while the step runs.
func heartbeatsAreThrottled(t *testing.T, e *durationEnv) {
	c := e.calls
	run := start(t, e.env, chattyRun, unique("chatty"))
	beats := result(t, e.env, run)
	evs, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, ev := range evs {
		if ev.Type == world.StepHeartbeat {
			recorded++
		}
	}
	// 2 s at one per 800 ms: the first, and up to two more (a slow
	// machine stretches the 2 s, so up to four).
	if beats < 50 || recorded < 1 || recorded > 4 {
		t.Fatalf("%d heartbeats recorded %d in the log, want 1 to 4", beats, recorded)
	}
	// The run's own writes (start, step, end) and one per recorded
	// heartbeat, no more.
	if n := c.appendsOf(run.ID); n > recorded+3 {
		t.Fatalf("%d appends for %d recorded heartbeats: heartbeats cost more than one append each", n, recorded)
	}
	t.Logf("%d heartbeats, %d recorded, %d appends", beats, recorded, c.appendsOf(run.ID))
}

// resumable works in three parts, heartbeating how many are done; its
// first attempt hangs after the first part, so that its heartbeat timeout
// fails it, and the retry starts from the part the heartbeat recorded.
var resumable = workflow.DefineStep("flowtest.duration.resumable", func(ctx context.Context, _ string) (int, error) {
	done := 0
	if _, err := workflow.HeartbeatDetails(ctx, &done); err != nil {
		return 0, workflow.Fatal(err)
	}
	info, _ := workflow.GetStepInfo(ctx)
	for ; done < 3; done++ {
		if info.Attempt == 1 && done == 1 {
			<-ctx.Done() // hung: no more heartbeats
			return 0, ctx.Err()
		}
		if err := workflow.Heartbeat(ctx, done+1); err != nil {
			return 0, err
		}
	}
	return info.Attempt*10 + done, nil
}, workflow.WithHeartbeatTimeout(300*time.Millisecond), workflow.WithMaxRetries(1),
	workflow.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))

var resumableRun = workflow.Define("flowtest.duration.resumableRun", func(ctx workflow.Context, key string) (int, error) {
	return resumable.Call(ctx, key)
})

// heartbeatTimeoutRetriesWithDetails: an attempt that stops heartbeating
// fails with ErrHeartbeatTimeout long before any step timeout, and its
// retry reads the last details it recorded.
func heartbeatTimeoutRetriesWithDetails(t *testing.T, e *durationEnv) {
	run := start(t, e.env, resumableRun, unique("resumable"))
	if got := result(t, e.env, run); got != 23 {
		t.Fatalf("the run got %d, want 23: attempt 2 resuming after part 1", got)
	}
	evs, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == world.StepRetrying && !strings.Contains(string(ev.Payload), "heartbeat") {
			t.Fatalf("the retry's error does not name the heartbeat timeout: %s", ev.Payload)
		}
	}
}
