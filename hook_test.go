package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
)

var collector = workflow.Define("hooks.collector", func(ctx workflow.Context, token string) ([]string, error) {
	h := workflow.CreateHook[string](ctx, workflow.WithToken(token), workflow.WithMetadata(map[string]string{"purpose": "collect"}))
	var got []string
	for v, err := range h.All(ctx) {
		if err != nil {
			return got, err
		}
		got = append(got, v)
		if v == "last" {
			h.Dispose(ctx) // ends the loop
		}
	}
	return got, nil
})

func TestHookAllIteratesUntilDisposed(t *testing.T) {
	env := workflowtest.New(t)
	ctx := context.Background()
	run := workflowtest.Start(env, collector, "collect:1")
	env.RunUntilIdle()
	info, err := env.Client.GetHook(ctx, "collect:1")
	if err != nil || info.RunID != run.ID || info.Responds || string(info.Metadata) != `{"purpose":"collect"}` {
		t.Fatalf("GetHook = %+v, %v", info, err)
	}
	for _, v := range []string{"a", "b", "last"} {
		if err := workflow.ResumeHook(ctx, env.Client, "collect:1", v); err != nil {
			t.Fatal(err)
		}
		env.RunUntilIdle()
	}
	got, err := run.Result()
	if err != nil || strings.Join(got, ",") != "a,b,last" {
		t.Fatalf("got %v, %v", got, err)
	}
	if err := workflow.ResumeHook(ctx, env.Client, "collect:1", "late"); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("resuming a disposed hook: %v, want ErrHookNotFound", err)
	}
}

type Approval struct {
	Approver string `json:"approver"`
	Amount   int    `json:"amount"`
}

var errNoApprover = errors.New("approver is required")

var approvals = workflow.DefineHook(func(a Approval) error {
	if a.Approver == "" {
		return errNoApprover
	}
	return nil
})

var validated = workflow.Define("hooks.validated", func(ctx workflow.Context, id string) (string, error) {
	h := approvals.Create(ctx, workflow.WithToken("validated:"+id))
	var invalid int
	for a, err := range h.All(ctx) {
		if errors.Is(err, workflow.ErrInvalidPayload) {
			invalid++
			continue
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s approved %d after %d invalid", a.Approver, a.Amount, invalid), nil
	}
	return "", errors.New("hook ended")
})

func TestDefineHookValidatesOnBothSides(t *testing.T) {
	env := workflowtest.New(t)
	ctx := context.Background()
	run := workflowtest.Start(env, validated, "v1")
	env.RunUntilIdle()
	before := len(run.Events())
	err := approvals.Resume(ctx, env.Client, "validated:v1", Approval{Amount: 5})
	if !errors.Is(err, workflow.ErrInvalidPayload) || !errors.Is(err, errNoApprover) {
		t.Fatalf("invalid payload: err = %v", err)
	}
	if n := len(run.Events()); n != before {
		t.Fatalf("an invalid payload was written: %d events, want %d", n, before)
	}
	// A plain ResumeHook skips the resumer's check; the workflow's catches it.
	if err := workflow.ResumeHook(ctx, env.Client, "validated:v1", Approval{Amount: 6}); err != nil {
		t.Fatal(err)
	}
	if err := approvals.Resume(ctx, env.Client, "validated:v1", Approval{Approver: "ann", Amount: 7}); err != nil {
		t.Fatal(err)
	}
	got, err := run.Result()
	if err != nil || got != "ann approved 7 after 1 invalid" {
		t.Fatalf("got %q, %v", got, err)
	}
}

var strict = workflow.Define("hooks.strict", func(ctx workflow.Context, id string) (Approval, error) {
	return approvals.Create(ctx, workflow.WithToken("strict:"+id)).Receive(ctx)
})

func TestAnInvalidPayloadErrorSurvivesTheLog(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, strict, "s1")
	env.RunUntilIdle()
	if err := workflow.ResumeHook(context.Background(), env.Client, "strict:s1", Approval{}); err != nil {
		t.Fatal(err)
	}
	_, err := run.Result()
	var invalid *workflow.InvalidPayloadError
	if !errors.As(err, &invalid) || !errors.Is(err, workflow.ErrInvalidPayload) || !strings.Contains(err.Error(), errNoApprover.Error()) {
		t.Fatalf("run error %v, want an InvalidPayloadError saying %q", err, errNoApprover)
	}
}

// original holds a token until told what to return; duplicates find it
// through the token and wait for its result, or cancel it.
var original = workflow.Define("hooks.original", func(ctx workflow.Context, req [2]string) (string, error) {
	token, action := req[0], req[1]
	h := workflow.CreateHook[string](ctx, workflow.WithToken(token))
	owner := h.Conflict(ctx)
	if owner == "" {
		v, err := h.Receive(ctx)
		return "original: " + v, err
	}
	if _, err := h.Receive(ctx); !errors.Is(err, workflow.ErrHookConflict) {
		return "", fmt.Errorf("the duplicate's Receive: %w, want ErrHookConflict", err)
	}
	orig := workflow.RunHandleOf[string](owner)
	status, err := orig.Status(ctx)
	if err != nil {
		return "", err
	}
	if action == "cancel" {
		return "cancelled " + orig.ID, orig.Cancel(ctx, "superseded")
	}
	res, err := orig.Result(ctx)
	return fmt.Sprintf("duplicate of %s (%s): %s", orig.ID, status, res), err
})

func TestConflictReturnsAHandleOnTheOwner(t *testing.T) {
	env := workflowtest.New(t)
	ctx := context.Background()
	first := workflowtest.Start(env, original, [2]string{"order:1", ""})
	env.RunUntilIdle()
	dup := workflowtest.Start(env, original, [2]string{"order:1", "wait"})
	env.RunUntilIdle() // the duplicate polls the original, which is still running
	if err := workflow.ResumeHook(ctx, env.Client, "order:1", "done"); err != nil {
		t.Fatal(err)
	}
	got, err := dup.Result()
	if want := fmt.Sprintf("duplicate of %s (running): original: done", first.ID); err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}

	third := workflowtest.Start(env, original, [2]string{"order:2", ""})
	env.RunUntilIdle()
	canceller := workflowtest.Start(env, original, [2]string{"order:2", "cancel"})
	if got, err := canceller.Result(); err != nil || got != "cancelled "+third.ID {
		t.Fatalf("got %q, %v", got, err)
	}
	_, err = third.Result()
	var cancelled *workflow.RunCancelledError
	if !errors.As(err, &cancelled) || cancelled.Reason != "superseded" {
		t.Fatalf("the original ended with %v, want its cancellation", err)
	}
}

// holder keeps its hook after losing it to a takeover, for mode "linger",
// so messages can land in its log after the takeover.
var holder = workflow.Define("hooks.holder", func(ctx workflow.Context, req [2]string) (string, error) {
	token, mode := req[0], req[1]
	opts := []workflow.HookOption{workflow.WithToken(token)}
	if mode == "force" {
		opts = append(opts, workflow.WithForceClaim())
	}
	h := workflow.CreateHook[string](ctx, opts...)
	v, err := h.Receive(ctx)
	if errors.Is(err, workflow.ErrHookForceClaimed) {
		owner := h.Conflict(ctx)
		if mode == "linger" {
			workflow.Sleep(ctx, time.Hour)
		}
		return "taken over by " + owner, nil
	}
	return "got " + v, err
})

func TestForceTakesTheTokenOver(t *testing.T) {
	env := workflowtest.New(t)
	ctx := context.Background()
	old := workflowtest.Start(env, holder, [2]string{"desk:1", ""})
	env.RunUntilIdle()
	taker := workflowtest.Start(env, holder, [2]string{"desk:1", "force"})
	env.RunUntilIdle()
	if got, err := old.Result(); err != nil || got != "taken over by "+taker.ID {
		t.Fatalf("previous owner: %q, %v", got, err)
	}
	if err := workflow.ResumeHook(ctx, env.Client, "desk:1", "hello"); err != nil {
		t.Fatal(err)
	}
	if got, err := taker.Result(); err != nil || got != "got hello" {
		t.Fatalf("new owner: %q, %v", got, err)
	}
}

// pausingWorld pauses the first GetHook of a token after reading it, so a
// test can move the token in between: a resume racing a takeover.
type pausingWorld struct {
	world.World
	paused, resume chan struct{}
}

func (w *pausingWorld) GetHook(ctx context.Context, token string) (world.Hook, error) {
	h, err := w.World.GetHook(ctx, token)
	if w.paused != nil {
		close(w.paused)
		w.paused = nil
		<-w.resume
	}
	return h, err
}

var replyLater = workflow.DefineStep("hooks.replyLater", func(ctx context.Context, m workflow.HookMessage[string, string]) (struct{}, error) {
	return struct{}{}, m.Respond(ctx, "answered "+m.Data)
})

// slowAnswerer takes the token over, then answers its first message two
// hours later.
var slowAnswerer = workflow.Define("hooks.slowAnswerer", func(ctx workflow.Context, token string) (string, error) {
	h := workflow.CreateRespondingHook[string, string](ctx, workflow.WithToken(token), workflow.WithForceClaim())
	m, err := h.Receive(ctx)
	if err != nil {
		return "", err
	}
	workflow.Sleep(ctx, 2*time.Hour)
	_, err = replyLater.Call(ctx, m)
	return m.Data, err
})

var lingering = workflow.Define("hooks.lingering", func(ctx workflow.Context, token string) (string, error) {
	h := workflow.CreateRespondingHook[string, string](ctx, workflow.WithToken(token))
	if m, err := h.Receive(ctx); err == nil {
		return "", fmt.Errorf("the old owner got %q after losing the token", m.Data)
	}
	workflow.Sleep(ctx, time.Hour)
	return "lingered", nil
})

// The resumer reads the old owner, the token moves, and the message lands
// in the old owner's log after the takeover event: it must reach the new
// owner, whose reply must reach the caller even though the old owner ends
// first (its end must not close the reply channel).
func TestResumeRacingATakeoverFollowsTheToken(t *testing.T) {
	env := workflowtest.New(t)
	old := workflowtest.Start(env, lingering, "race:1")
	env.RunUntilIdle()

	w := &pausingWorld{World: env.World, paused: make(chan struct{}), resume: make(chan struct{})}
	paused := w.paused
	c := workflow.NewClient(w, workflow.WithClock(env.Now))
	type result struct {
		reply string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		r, err := workflow.ResumeRespondingHook[string, string](context.Background(), c, "race:1", "hi")
		done <- result{r, err}
	}()
	<-paused // the resumer has read the old owner
	taker := workflowtest.Start(env, slowAnswerer, "race:1")
	env.RunUntilIdle() // the takeover is recorded in the old owner's log
	close(w.resume)
	env.While(func() { // until the new owner has the message and sleeps
		for give := time.Now().Add(5 * time.Second); !hasEvent(env.Events(taker.ID), world.WaitCreated); time.Sleep(time.Millisecond) {
			if time.Now().After(give) {
				t.Errorf("the message never reached the new owner\nold owner:\n%s\nnew owner:\n%s", old.Timeline(), taker.Timeline())
				return
			}
		}
	})
	if t.Failed() {
		return
	}
	env.Advance(time.Hour) // the old owner ends; the caller still waits
	if got, err := old.Result(); err != nil || got != "lingered" {
		t.Fatalf("old owner: %q, %v", got, err)
	}
	env.Advance(time.Hour) // the new owner answers
	r := <-done
	if r.err != nil || r.reply != "answered hi" {
		t.Fatalf("caller got %q, %v", r.reply, r.err)
	}
	if got, err := taker.Result(); err != nil || got != "hi" {
		t.Fatalf("new owner: %q, %v", got, err)
	}
}

func TestRetentionKeepsTheTokenAfterTheRunEnds(t *testing.T) {
	env := workflowtest.New(t)
	ctx := context.Background()
	first := workflowtest.Start(env, retained, "ret:1")
	env.RunUntilIdle()
	if err := workflow.ResumeHook(ctx, env.Client, "ret:1", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Result(); err != nil {
		t.Fatal(err)
	}
	if err := workflow.ResumeHook(ctx, env.Client, "ret:1", "y"); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("resuming a retained token: %v, want ErrHookNotFound", err)
	}
	if info, err := env.Client.GetHook(ctx, "ret:1"); err != nil || !info.Retained || info.RunID != first.ID {
		t.Fatalf("a retained hook stays readable: %+v, %v", info, err)
	}
	_, err := workflowtest.Start(env, retained, "ret:1").Result()
	if !errors.Is(err, workflow.ErrHookConflict) {
		t.Fatalf("claiming a retained token: %v, want ErrHookConflict", err)
	}
	env.Advance(2 * time.Hour)
	again := workflowtest.Start(env, retained, "ret:1")
	env.RunUntilIdle()
	if s := again.Status(); s != workflow.StatusRunning {
		t.Fatalf("after the retention the token is free, but the run is %s\n%s", s, again.Timeline())
	}
}

var retained = workflow.Define("hooks.retained", func(ctx workflow.Context, token string) (string, error) {
	h := workflow.CreateHook[string](ctx, workflow.WithToken(token), workflow.WithMinRetention(time.Hour))
	return h.Receive(ctx)
})

func hasEvent(evs []world.Event, t world.EventType) bool {
	for _, ev := range evs {
		if ev.Type == t {
			return true
		}
	}
	return false
}

func TestHookTokenConflictNamesTheOwner(t *testing.T) {
	env := workflowtest.New(t)
	first := workflowtest.Start(env, approval, "dup")
	env.RunUntilIdle()
	second := workflowtest.Start(env, approval, "dup")
	_, err := second.Result()
	var conflict *workflow.HookConflictError
	if !errors.As(err, &conflict) || conflict.OwnerRunID != first.ID || !errors.Is(err, workflow.ErrHookConflict) {
		t.Fatalf("err = %v, want a conflict naming %s", err, first.ID)
	}
}

func TestResumeUnknownTokenIsNotFound(t *testing.T) {
	env := workflowtest.New(t)
	err := workflow.ResumeHook(context.Background(), env.Client, "nobody", 1)
	if !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("err = %v", err)
	}
}
