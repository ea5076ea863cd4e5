package flowtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

var echoes = workflow.DefineRespondingHook[string, string]()

var echo = workflow.DefineStep("flowtest.echo", func(ctx context.Context, m workflow.HookMessage[string, string]) (struct{}, error) {
	return struct{}{}, m.Respond(ctx, "echo "+m.Data)
})

// echoing answers n messages, then ends.
var echoing = workflow.Define("flowtest.echoing", func(ctx workflow.Context, req struct {
	Token string
	N     int
}) (int, error) {
	h := echoes.Create(ctx, workflow.WithToken(req.Token))
	for n := 0; n < req.N; n++ {
		m, err := h.Receive(ctx)
		if err != nil {
			return n, err
		}
		if _, err := echo.Call(ctx, m); err != nil {
			return n, err
		}
	}
	return req.N, nil
})

// patientEcho skips messages that do not decode and answers the first
// good one.
var patientEcho = workflow.Define("flowtest.patient-echo", func(ctx workflow.Context, token string) (struct{}, error) {
	for m, err := range echoes.Create(ctx, workflow.WithToken(token)).All(ctx) {
		if err == nil {
			_, err = echo.Call(ctx, m)
			return struct{}{}, err
		}
	}
	return struct{}{}, nil
})

// respondingHookRejectsUndecodable: a message that does not decode into the
// hook's type is refused to its caller as soon as the workflow meets it,
// though the run goes on; the caller does not wait out its timeout.
func respondingHookRejectsUndecodable(t *testing.T, e *env) {
	token := unique("patient")
	run := start(t, e, patientEcho, token)
	waitForHook(t, e, token)
	_, err := workflow.ResumeRespondingHook[int, string](e.ctx, e.client, token, 42, workflow.WithReplyTimeout(5*time.Second))
	if !errors.Is(err, workflow.ErrHookMessageRejected) {
		t.Fatalf("resume with a number for a string hook: err = %v, want ErrHookMessageRejected", err)
	}
	if got, err := echoes.Resume(e.ctx, e.client, token, "fine"); err != nil || got != "echo fine" {
		t.Fatalf("the next message got %q, %v", got, err)
	}
	result(t, e, run)
}

func startEchoing(t *testing.T, e *env, n int) (*workflow.Run[int], string) {
	token := unique("echo")
	run := start(t, e, echoing, struct {
		Token string
		N     int
	}{token, n})
	if info := waitForHook(t, e, token); !info.Responds || info.Webhook {
		t.Fatalf("GetHook(%q) = %+v, want a responding hook", token, info)
	}
	return run, token
}

// resumeAtOnce has callers resume the echoing hook token at once, each
// with a message of its own, and checks each gets its own echo.
func resumeAtOnce(t *testing.T, e *env, token string, callers int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			msg := fmt.Sprint("caller-", i)
			got, err := echoes.Resume(e.ctx, e.client, token, msg)
			if err != nil || got != "echo "+msg {
				t.Errorf("caller %d got %q, %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

func respondingHookReplies(t *testing.T, e *env) {
	run, token := startEchoing(t, e, 2)
	for _, msg := range []string{"one", "two"} {
		got, err := echoes.Resume(e.ctx, e.client, token, msg)
		if err != nil || got != "echo "+msg {
			t.Fatalf("reply to %q: %q, %v", msg, got, err)
		}
	}
	if n := result(t, e, run); n != 2 {
		t.Fatalf("the run answered %d", n)
	}
}

// respondingHookConcurrentCallers: every caller gets its own reply.
func respondingHookConcurrentCallers(t *testing.T, e *env) {
	const callers = 20
	run, token := startEchoing(t, e, callers)
	resumeAtOnce(t, e, token, callers)
	if n := result(t, e, run); n != callers {
		t.Fatalf("the run answered %d", n)
	}
}

var spell = workflow.DefineStep("flowtest.spell", func(ctx context.Context, m workflow.HookMessage[string, workflow.Stream[string]]) (struct{}, error) {
	return struct{}{}, m.Respond(ctx, workflow.NewStream(func(yield func(string) bool) error {
		for _, r := range m.Data {
			if !yield(string(r)) {
				return nil
			}
		}
		return nil
	}))
})

var speller = workflow.Define("flowtest.speller", func(ctx workflow.Context, token string) (struct{}, error) {
	m, err := workflow.CreateRespondingHook[string, workflow.Stream[string]](ctx, workflow.WithToken(token)).Receive(ctx)
	if err != nil {
		return struct{}{}, err
	}
	return spell.Call(ctx, m)
})

func respondingHookStreamedReply(t *testing.T, e *env) {
	token := unique("spell")
	run := start(t, e, speller, token)
	waitForHook(t, e, token)
	letters, err := workflow.ResumeRespondingHook[string, workflow.Stream[string]](e.ctx, e.client, token, "stream")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for l, err := range letters.All(e.ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	if strings.Join(got, ",") != "s,t,r,e,a,m" {
		t.Fatalf("streamed %q", got)
	}
	result(t, e, run)
}

// ignore takes a message and ends without answering it.
var ignore = workflow.Define("flowtest.ignore", func(ctx workflow.Context, token string) (string, error) {
	m, err := workflow.CreateRespondingHook[string, string](ctx, workflow.WithToken(token)).Receive(ctx)
	return m.Data, err
})

func respondingHookNoReply(t *testing.T, e *env) {
	token := unique("ignore")
	run := start(t, e, ignore, token)
	waitForHook(t, e, token)
	_, err := workflow.ResumeRespondingHook[string, string](e.ctx, e.client, token, "hello?")
	if !errors.Is(err, workflow.ErrHookResponseNotSent) {
		t.Fatalf("err = %v, want ErrHookResponseNotSent", err)
	}
	if got := result(t, e, run); got != "hello?" {
		t.Fatalf("the run got %q", got)
	}
}

func plainHookDoesNotReply(t *testing.T, e *env) {
	token := unique("hold")
	run := startHold(t, e, token, false)
	waitForHook(t, e, token)
	_, err := workflow.ResumeRespondingHook[string, string](e.ctx, e.client, token, "q")
	if !errors.Is(err, workflow.ErrNotRespondingHook) {
		t.Fatalf("err = %v, want ErrNotRespondingHook", err)
	}
	if err := workflow.ResumeHook(e.ctx, e.client, token, "plain"); err != nil {
		t.Fatal(err)
	}
	if got := result(t, e, run); got != "got plain" { // the refused message never arrived
		t.Fatalf("the run got %q", got)
	}
}
