package flowtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// Flow control on a World with a world.Limiter: a workflow's concurrency
// limit per key is never exceeded, however many starts race; queued runs
// start in order when slots free, and none starves; a queued run can be
// cancelled; a run that fails frees its slot, one that continues as new
// keeps it for its successor; a rate limit delivers starts no earlier
// than their window.
var limitScenarios = []scenario{
	{"ConcurrencyLimitHolds", concurrencyLimitHolds},
	{"QueuedRunsStartInOrder", queuedRunsStartInOrder},
	{"EndedRunsFreeTheirSlot", endedRunsFreeTheirSlot},
	{"RateLimitSpreadsStarts", rateLimitSpreadsStarts},
	{"CancelDyingBeforeItsMessageFreesTheSlot", cancelDyingBeforeItsMessageFreesTheSlot},
	{"ChildRunsKeepTheLimit", childRunsKeepTheLimit},
}

// limitedIn is a limited run's input: its key, and what it does.
type limitedIn struct {
	Key   string `json:"key"`
	Name  string `json:"name"`            // recorded in the key's order
	Hold  string `json:"hold,omitempty"`  // a hook token to wait on first
	Fail  bool   `json:"fail,omitempty"`  // fail after the step
	Gens  int    `json:"gens,omitempty"`  // continue as new this many times
	Pause int    `json:"pause,omitempty"` // milliseconds the step takes
}

// tracker records, per key, how many limited steps run at once (and the
// most ever), the order runs reached their step and when.
var tracker = struct {
	sync.Mutex
	running, most map[string]int
	order         map[string][]string
	at            map[string]time.Time
}{running: map[string]int{}, most: map[string]int{}, order: map[string][]string{}, at: map[string]time.Time{}}

var limitedStep = workflow.DefineStep("flowtest.limitedStep", func(ctx context.Context, in limitedIn) (int, error) {
	tracker.Lock()
	tracker.running[in.Key]++
	tracker.most[in.Key] = max(tracker.most[in.Key], tracker.running[in.Key])
	tracker.order[in.Key] = append(tracker.order[in.Key], in.Name)
	tracker.at[in.Key+"/"+in.Name] = time.Now()
	tracker.Unlock()
	defer func() {
		tracker.Lock()
		tracker.running[in.Key]--
		tracker.Unlock()
	}()
	select {
	case <-time.After(time.Duration(in.Pause) * time.Millisecond):
		return 1, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}, workflow.WithMaxRetries(0))

func limitedBody(ctx workflow.Context, in limitedIn) (int, error) {
	if in.Hold != "" {
		if _, err := workflow.CreateHook[int](ctx, workflow.WithToken(in.Hold)).Receive(ctx); err != nil {
			return 0, err
		}
	}
	n, err := limitedStep.Call(ctx, in)
	switch {
	case err != nil:
		return 0, err
	case in.Fail:
		return 0, workflow.Fatal(errors.New("failing as asked"))
	case in.Gens > 0:
		in.Gens--
		in.Name += "+"
		return 0, workflow.ContinueAsNew(ctx, in)
	}
	return n, nil
}

var (
	limitedTwo = workflow.Define("flowtest.limitedTwo", limitedBody, workflow.WithConcurrency(2))
	limitedOne = workflow.Define("flowtest.limitedOne", limitedBody, workflow.WithConcurrency(1))
	// ratePeriod is long enough for the AWS World's whole-second delays.
	ratePeriod = 2 * time.Second
	rated      = workflow.Define("flowtest.rated", limitedBody, workflow.WithRateLimit(2, ratePeriod))
)

func startLimited(t *testing.T, e *env, wf *workflow.Workflow[limitedIn, int], in limitedIn, opts ...workflow.StartOption) *workflow.Run[int] {
	t.Helper()
	run, err := workflow.Start(e.ctx, e.client, wf, in, append(opts, workflow.WithLimitKey(in.Key))...)
	if err != nil {
		t.Fatalf("start %s: %v", in.Name, err)
	}
	return run
}

func trackedOrder(key string) []string {
	tracker.Lock()
	defer tracker.Unlock()
	return slices.Clone(tracker.order[key])
}

func trackedMost(key string) int {
	tracker.Lock()
	defer tracker.Unlock()
	return tracker.most[key]
}

// concurrencyLimitHolds races 48 starts over 3 keys under a limit of 2
// per key: no key ever runs 3 steps at once, every run completes, and
// each key's runs did run 2 at a time at some point.
func concurrencyLimitHolds(t *testing.T, e *env) {
	keys := []string{unique("a"), unique("b"), unique("c")}
	const perKey = 16
	runs := make(chan *workflow.Run[int], perKey*len(keys))
	var wg sync.WaitGroup
	for i := range perKey * len(keys) {
		wg.Go(func() {
			runs <- startLimited(t, e, limitedTwo, limitedIn{Key: keys[i%len(keys)], Name: fmt.Sprint(i), Pause: 40})
		})
	}
	wg.Wait()
	close(runs)
	for run := range runs {
		if got := result(t, e, run); got != 1 {
			t.Fatalf("run %s: %d, want 1", run.ID, got)
		}
	}
	for _, k := range keys {
		if got := len(trackedOrder(k)); got != perKey {
			t.Errorf("key %s: %d runs reached their step, want %d", k, got, perKey)
		}
		if most := trackedMost(k); most > 2 {
			t.Errorf("key %s: %d runs ran at once under a limit of 2", k, most)
		}
	}
}

// queuedRunsStartInOrder holds a limit of 1 with a run waiting on a hook,
// starts six more one after another (each queued), cancels the third,
// and lets the first end: the rest start in the order they were queued.
func queuedRunsStartInOrder(t *testing.T, e *env) {
	key, tag := unique("fifo"), map[string]string{"case": unique("fifo")}
	hold := unique("hold")
	first := startLimited(t, e, limitedOne, limitedIn{Key: key, Name: "first", Hold: hold}, workflow.WithAttributes(tag))
	waitForHook(t, e, hold)
	var queued []*workflow.Run[int]
	for i := range 6 {
		run := startLimited(t, e, limitedOne, limitedIn{Key: key, Name: fmt.Sprint(i)}, workflow.WithAttributes(tag))
		if st, err := run.Status(e.ctx); err != nil || st != workflow.StatusQueued {
			t.Fatalf("run %d behind a full limit: status %q (%v), want %q", i, st, err, workflow.StatusQueued)
		}
		queued = append(queued, run)
	}
	page, err := e.client.ListRuns(e.ctx, workflow.RunFilter{Workflow: limitedOne.Name(), Status: workflow.StatusQueued, Attributes: tag})
	if err != nil || len(page.Runs) != 6 {
		t.Fatalf("ListRuns of queued runs: %d runs (%v), want 6", len(page.Runs), err)
	}
	if err := queued[2].Cancel(e.ctx, "no longer wanted"); err != nil {
		t.Fatalf("cancel a queued run: %v", err)
	}
	if err := workflow.ResumeHook(e.ctx, e.client, hold, 1); err != nil {
		t.Fatalf("resume the first run: %v", err)
	}
	result(t, e, first)
	for i, run := range queued {
		_, err := run.Result(e.ctx)
		if i == 2 != errors.Is(err, workflow.ErrRunCancelled) {
			t.Fatalf("queued run %d: %v", i, err)
		}
	}
	if got, want := trackedOrder(key), []string{"first", "0", "1", "3", "4", "5"}; !slices.Equal(got, want) {
		t.Fatalf("runs reached their step in the order %v, want %v", got, want)
	}
}

// endedRunsFreeTheirSlot runs, under a limit of 1, a run that fails, then
// a run that continues as new twice, with a run queued behind each: the
// failure lets the next run in, the chain keeps the slot to its end.
func endedRunsFreeTheirSlot(t *testing.T, e *env) {
	key := unique("ends")
	failing := startLimited(t, e, limitedOne, limitedIn{Key: key, Name: "fails", Fail: true, Pause: 50})
	chain := startLimited(t, e, limitedOne, limitedIn{Key: key, Name: "chain", Gens: 2, Pause: 50})
	last := startLimited(t, e, limitedOne, limitedIn{Key: key, Name: "last"})
	if _, err := failing.Result(e.ctx); err == nil {
		t.Fatal("the failing run completed")
	}
	result(t, e, chain)
	result(t, e, last)
	if got, want := trackedOrder(key), []string{"fails", "chain", "chain+", "chain++", "last"}; !slices.Equal(got, want) {
		t.Fatalf("runs reached their step in the order %v, want %v", got, want)
	}
	if most := trackedMost(key); most != 1 {
		t.Fatalf("%d runs ran at once under a limit of 1", most)
	}
}

// rateLimitSpreadsStarts starts 6 runs one after another of a workflow
// limited to 2 starts per window: all complete, and the i-th reaches its
// step no earlier than window i/2 after the one the starts began in. That
// bound holds however the starts fall across a boundary: each window
// takes at most 2, in order, from the first one on.
func rateLimitSpreadsStarts(t *testing.T, e *env) {
	key := unique("rate")
	window := func(at time.Time) int64 { return at.UnixNano() / int64(ratePeriod) }
	began := time.Now()
	var runs []*workflow.Run[int]
	for i := range 6 {
		runs = append(runs, startLimited(t, e, rated, limitedIn{Key: key, Name: fmt.Sprint(i)}))
	}
	for _, run := range runs {
		result(t, e, run)
	}
	tracker.Lock()
	defer tracker.Unlock()
	for i := range 6 {
		at := tracker.at[key+"/"+fmt.Sprint(i)]
		allowed := time.Unix(0, (window(began)+int64(i/2))*int64(ratePeriod))
		if at.Before(allowed.Add(-10 * time.Millisecond)) {
			t.Errorf("start %d reached its step at %s, before its window opened at %s", i, at.Format(time.StampMilli), allowed.Format(time.StampMilli))
		}
	}
}

// errDied stands for the death of the process at the call that returns it:
// the caller does nothing after it.
var errDied = errors.New("the process died here")

// diesBeforeWaking is a World on which the process dies as it queues a
// message due now (a cancellation's prompt message, after its append).
// It holds the messages due later instead of queueing them, for the
// scenario to deliver when it has let the time pass.
type diesBeforeWaking struct {
	world.World
	later []world.Message
}

func (w *diesBeforeWaking) Enqueue(_ context.Context, msg world.Message) error {
	if msg.DeliverAt.IsZero() {
		return errDied
	}
	w.later = append(w.later, msg)
	return nil
}

// cancelDyingBeforeItsMessageFreesTheSlot holds a limit of 1 with a run
// waiting on a hook and a second queued behind it, then cancels the first
// from a process that dies between the cancellation's append and its
// message. The message it queued before the append, due well after it,
// stands in for the lost one: delivered when due, it frees the slot, and
// the second run gets it.
func cancelDyingBeforeItsMessageFreesTheSlot(t *testing.T, e *env) {
	key, hold := unique("dies"), unique("hold")
	first := startLimited(t, e, limitedOne, limitedIn{Key: key, Name: "first", Hold: hold})
	waitForHook(t, e, hold)
	second := startLimited(t, e, limitedOne, limitedIn{Key: key, Name: "second"})
	if st, err := second.Status(e.ctx); err != nil || st != workflow.StatusQueued {
		t.Fatalf("the second run behind a full limit: status %q (%v), want %q", st, err, workflow.StatusQueued)
	}
	dying := &diesBeforeWaking{World: e.world}
	cancelledAt := time.Now()
	if err := workflow.RunOf[int](workflow.NewClient(dying), first.ID).Cancel(e.ctx, "dies before its message"); !errors.Is(err, errDied) {
		t.Fatalf("Cancel returned %v, want the process's death", err)
	}
	if st, err := first.Status(e.ctx); err != nil || st != workflow.StatusCancelled {
		t.Fatalf("the first run: status %q (%v), want %q", st, err, workflow.StatusCancelled)
	}
	if len(dying.later) != 1 || dying.later[0].RunID != first.ID || dying.later[0].DeliverAt.Before(cancelledAt.Add(30*time.Second)) {
		t.Fatalf("Cancel queued %+v before it died, want one message for run %s, due well after its append", dying.later, first.ID)
	}
	due := dying.later[0]
	due.DeliverAt = time.Time{} // its time has come
	if err := e.world.Enqueue(e.ctx, due); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	if _, err := second.Result(ctx); err != nil {
		t.Fatalf("the queued run never got the cancelled run's slot: %v", err)
	}
}

// limitedParent starts its children under limitedOne with their keys,
// and returns the sum of their results.
var limitedParent = workflow.Define("flowtest.limitedParent", func(ctx workflow.Context, children []limitedIn) (int, error) {
	var runs []*workflow.ChildRun[int]
	for _, in := range children {
		runs = append(runs, limitedOne.StartChild(ctx, in, workflow.WithLimitKey(in.Key)))
	}
	sum := 0
	for _, r := range runs {
		n, err := r.Get(ctx)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
})

// childRunsKeepTheLimit has a parent start two children of a workflow
// limited to 1, the first waiting on a hook: the second is queued until
// the first ends, as if started by a client.
func childRunsKeepTheLimit(t *testing.T, e *env) {
	key, hold := unique("children"), unique("hold")
	parent := start(t, e, limitedParent, []limitedIn{{Key: key, Name: "first", Hold: hold}, {Key: key, Name: "second"}})
	waitForHook(t, e, hold)
	waitQueued(t, e, limitedOne.Name(), map[string]string{"$parentRunId": parent.ID}, 1)
	if err := workflow.ResumeHook(e.ctx, e.client, hold, 1); err != nil {
		t.Fatalf("resume the first child: %v", err)
	}
	if got := result(t, e, parent); got != 2 {
		t.Fatalf("the parent returned %d, want 2", got)
	}
	if got, want := trackedOrder(key), []string{"first", "second"}; !slices.Equal(got, want) {
		t.Fatalf("children reached their step in the order %v, want %v", got, want)
	}
}

// waitQueued waits until n runs of workflow with attrs are queued (the
// parent may still be starting them).
func waitQueued(t *testing.T, e *env, workflowName string, attrs map[string]string, n int) {
	t.Helper()
	for {
		page, err := e.client.ListRuns(e.ctx, workflow.RunFilter{Workflow: workflowName, Status: workflow.StatusQueued, Attributes: attrs})
		if err == nil && len(page.Runs) == n {
			return
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("%d queued runs of %s never appeared: %d (%v)", n, workflowName, len(page.Runs), err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
