package flowtest

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// A run's hook tokens are free once Run.Result or Run.Cancel has returned:
// a run started right after claims them without a conflict. The scenarios
// run on a World whose DisposeHook answers late (releaseDelay), as a far
// or busy store does, so a release made after the run is seen ended shows
// up as a conflict instead of hiding in a race.
var releaseScenarios = []scenario{
	{"TokenFreeOnceResultReturns", tokenFreeOnceResultReturns},
	{"TokenFreeOnceCancelReturns", tokenFreeOnceCancelReturns},
}

// releaseDelay is longer than a worker takes to start a run and claim its
// token, and longer than Result's slowest pause on a World that cannot
// notify.
const releaseDelay = 1200 * time.Millisecond

// claimer claims a token and ends at once, saying whether it got it.
var claimer = workflow.Define("flowtest.claimer", func(ctx workflow.Context, token string) (string, error) {
	h := workflow.CreateHook[string](ctx, workflow.WithToken(token))
	if owner := h.Conflict(ctx); owner != "" {
		return "held by " + owner, nil
	}
	return "claimed", nil
})

// claimRightAfter starts a run that claims token and fails the test unless
// it got it.
func claimRightAfter(t *testing.T, e *env, token, what string) {
	t.Helper()
	if got := result(t, e, start(t, e, claimer, token)); got != "claimed" {
		t.Fatalf("a run started right after %s: %s, want the token free", what, got)
	}
}

func tokenFreeOnceResultReturns(t *testing.T, e *env) {
	token := unique("release")
	run := startHold(t, e, token, false)
	waitForHook(t, e, token)
	if err := workflow.ResumeHook(e.ctx, e.client, token, "last"); err != nil {
		t.Fatal(err)
	}
	if got := result(t, e, run); got != "got last" {
		t.Fatalf("the holder got %q", got)
	}
	claimRightAfter(t, e, token, "Result returned")
}

func tokenFreeOnceCancelReturns(t *testing.T, e *env) {
	token := unique("release")
	run := startHold(t, e, token, false)
	waitForHook(t, e, token)
	if err := run.Cancel(e.ctx, "done with it"); err != nil {
		t.Fatal(err)
	}
	claimRightAfter(t, e, token, "Cancel returned")
}

// slowRelease is a World whose DisposeHook answers releaseDelay late. It
// keeps the World's Notifier, so that waiters wake as they would on it.
type slowRelease struct{ world.World }

func (s slowRelease) DisposeHook(ctx context.Context, token, runID string, retainUntil time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(releaseDelay):
	}
	return s.World.DisposeHook(ctx, token, runID, retainUntil)
}

type slowReleaseNotifier struct {
	slowRelease
	world.Notifier
}

func withSlowRelease(w world.World) world.World {
	if n, ok := w.(world.Notifier); ok {
		return slowReleaseNotifier{slowRelease{w}, n}
	}
	return slowRelease{w}
}
