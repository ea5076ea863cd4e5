package flowtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
)

// collect takes messages until one says "stop", then disposes the hook.
var collect = workflow.Define("flowtest.collect", func(ctx workflow.Context, token string) (string, error) {
	h := workflow.CreateHook[string](ctx, workflow.WithToken(token))
	var got []string
	for v, err := range h.All(ctx) {
		if err != nil {
			return "", err
		}
		if got = append(got, v); v == "stop" {
			h.Dispose(ctx)
		}
	}
	return strings.Join(got, " "), nil
})

func hookMessagesInOrder(t *testing.T, e *env) {
	token := unique("collect")
	run := start(t, e, collect, token)
	waitForHook(t, e, token)
	for _, v := range []string{"a", "b", "stop"} {
		if err := workflow.ResumeHook(e.ctx, e.client, token, v); err != nil {
			t.Fatalf("resume %q: %v", v, err)
		}
	}
	if got := result(t, e, run); got != "a b stop" {
		t.Fatalf("the workflow got %q", got)
	}
	if err := workflow.ResumeHook(e.ctx, e.client, token, "late"); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("resuming a disposed hook: %v, want ErrHookNotFound", err)
	}
}

// hold waits for one message; a run that lost its token says to whom.
var hold = workflow.Define("flowtest.hold", func(ctx workflow.Context, req struct {
	Token string
	Force bool
}) (string, error) {
	opts := []workflow.HookOption{workflow.WithToken(req.Token)}
	if req.Force {
		opts = append(opts, workflow.WithForceClaim())
	}
	h := workflow.CreateHook[string](ctx, opts...)
	v, err := h.Receive(ctx)
	switch {
	case errors.Is(err, workflow.ErrHookForceClaimed):
		return "taken by " + h.Conflict(ctx), nil
	case errors.Is(err, workflow.ErrHookConflict):
		return "held by " + h.Conflict(ctx), nil
	}
	return "got " + v, err
})

func startHold(t *testing.T, e *env, token string, force bool) *workflow.Run[string] {
	return start(t, e, hold, struct {
		Token string
		Force bool
	}{token, force})
}

func hookTokenConflict(t *testing.T, e *env) {
	token := unique("hold")
	first := startHold(t, e, token, false)
	waitForHook(t, e, token)
	second := startHold(t, e, token, false)
	if got := result(t, e, second); got != "held by "+first.ID {
		t.Fatalf("the second run got %q, want a conflict naming %s", got, first.ID)
	}
	if err := workflow.ResumeHook(e.ctx, e.client, token, "x"); err != nil {
		t.Fatal(err)
	}
	if got := result(t, e, first); got != "got x" {
		t.Fatalf("the owner got %q", got)
	}
}

func hookForceTakeover(t *testing.T, e *env) {
	token := unique("hold")
	old := startHold(t, e, token, false)
	waitForHook(t, e, token)
	taker := startHold(t, e, token, true)
	if got := result(t, e, old); got != "taken by "+taker.ID {
		t.Fatalf("the previous owner got %q", got)
	}
	if err := workflow.ResumeHook(e.ctx, e.client, token, "y"); err != nil {
		t.Fatal(err)
	}
	if got := result(t, e, taker); got != "got y" {
		t.Fatalf("the new owner got %q", got)
	}
}
