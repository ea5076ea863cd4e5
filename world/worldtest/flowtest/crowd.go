package flowtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// answeringAll answers N messages, each with a step of its own that runs
// beside the others, then ends.
var answeringAll = workflow.Define("flowtest.answering-all", func(ctx workflow.Context, req struct {
	Token string
	N     int
}) (int, error) {
	h := echoes.Create(ctx, workflow.WithToken(req.Token))
	var answered []workflow.Future[struct{}]
	for range req.N {
		m, err := h.Receive(ctx)
		if err != nil {
			return 0, err
		}
		answered = append(answered, workflow.Go(ctx, func(ctx workflow.Context) (struct{}, error) { return echo.Call(ctx, m) }))
	}
	_, err := workflow.Gather(ctx, answered...)
	return req.N, err
})

// crowdSize is how many callers resume one hook at once in
// RespondingHookCrowd: enough that they contend for the run's log if
// every resume must append to it.
const crowdSize = 100

// respondingHookCrowd: a hundred callers resume one responding hook at
// once. Each gets its own reply, and the run's log records each message
// once.
func respondingHookCrowd(t *testing.T, e *env) {
	token := unique("crowd")
	run := start(t, e, answeringAll, struct {
		Token string
		N     int
	}{token, crowdSize})
	waitForHook(t, e, token)
	resumeAtOnce(t, e, token, crowdSize)
	if n := result(t, e, run); n != crowdSize {
		t.Fatalf("the run answered %d", n)
	}
	evs, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	received := 0
	for _, ev := range evs {
		if ev.Type == world.HookReceived {
			received++
		}
	}
	if received != crowdSize {
		t.Fatalf("the log records %d messages, want %d", received, crowdSize)
	}
	settles(t, e, crowdSize)
}

// settlePerResume is how many World calls each resume of a crowd may cost
// from the run's result until the World goes quiet: its share of the end
// (closing its reply stream), and for the wake-up it left in the queue,
// the worker's receive, one read of the ended run and the ack. Seeing the
// end through again on each of those wake-ups costs as many calls as
// there were callers.
const settlePerResume = 10

// quietCalls is the most calls a World makes in a quiet second: the
// worker's idle receive, and the stuck-run check's.
const quietCalls = 2

// settles: on a World that counts its calls, once the run answered its
// resumes and ended, the World goes quiet within settlePerResume calls a
// resume. The calls, not the time, are what it checks: a World still
// within its budget when the scenario's time runs out (a loaded machine)
// is let go with a note; a loop that never settles spends the budget
// long before.
func settles(t *testing.T, e *env, resumes int) {
	t.Helper()
	counter, ok := e.world.(interface{ Calls() map[string]int64 })
	if !ok {
		return // only a World that counts its calls shows what it spends
	}
	first := counter.Calls()
	budget := int64(settlePerResume * resumes)
	for {
		before := sumCalls(counter.Calls())
		select {
		case <-e.ctx.Done():
			t.Logf("the World did not go quiet in the scenario's time, within its budget so far: %v", diffCalls(first, counter.Calls()))
			return
		case <-time.After(time.Second):
		}
		now := counter.Calls()
		if spent := sumCalls(now) - sumCalls(first); spent > budget {
			t.Fatalf("after the run answered %d resumes and ended, the World made %d calls before going quiet, want at most %d: %v",
				resumes, spent, budget, diffCalls(first, now))
		}
		if sumCalls(now)-before <= quietCalls {
			return
		}
	}
}

func sumCalls(calls map[string]int64) int64 {
	var n int64
	for _, c := range calls {
		n += c
	}
	return n
}

// diffCalls is what each operation made from before to after.
func diffCalls(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for op, n := range after {
		if n != before[op] {
			d[op] = n - before[op]
		}
	}
	return d
}

// respondingHookRacesTheEnd: callers resume a hook whose run ends after
// its first message. One gets the reply; each other learns at once that
// none will come: the hook is gone (ErrHookNotFound), or its message
// reached the run but was not answered before the end
// (ErrHookResponseNotSent). None waits out its timeout.
func respondingHookRacesTheEnd(t *testing.T, e *env) {
	const callers = 10
	run, token := startEchoing(t, e, 1)
	var mu sync.Mutex
	answered := 0
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			msg := fmt.Sprint("caller-", i)
			got, err := workflow.ResumeRespondingHook[string, string](e.ctx, e.client, token, msg, workflow.WithReplyTimeout(scenarioBound/2))
			switch {
			case err == nil && got == "echo "+msg:
				mu.Lock()
				answered++
				mu.Unlock()
			case errors.Is(err, workflow.ErrHookNotFound), errors.Is(err, workflow.ErrHookResponseNotSent):
			default:
				t.Errorf("caller %d got %q, %v", i, got, err)
			}
		})
	}
	wg.Wait()
	if answered != 1 {
		t.Fatalf("%d callers got a reply, want 1", answered)
	}
	if n := result(t, e, run); n != 1 {
		t.Fatalf("the run answered %d", n)
	}
}
