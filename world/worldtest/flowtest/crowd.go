package flowtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

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
