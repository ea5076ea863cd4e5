package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
)

// The tests below prove the rows of the Semantics table of the
// RespondingHook proposal, https://github.com/vercel/workflow/discussions/3740,
// one or two rows each (docs/HOOKS.md lists them).

type Query struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type Quote struct {
	SKU   string `json:"sku"`
	Price int    `json:"price"`
	Note  string `json:"note"`
}

var quotes = workflow.DefineRespondingHook[Query, Quote]()

var quote = workflow.DefineStep("reply.quote", func(ctx context.Context, m workflow.HookMessage[Query, Quote]) (struct{}, error) {
	return struct{}{}, m.Respond(ctx, Quote{SKU: m.Data.SKU, Price: 10 * m.Data.Qty, Note: strings.ToUpper(m.Data.SKU) + "-quoted"})
})

// quoting answers n messages, then ends.
var quoting = workflow.Define("reply.quoting", func(ctx workflow.Context, req struct {
	Token string
	N     int
}) (int, error) {
	h := quotes.Create(ctx, workflow.WithToken(req.Token))
	answered := 0
	for m, err := range h.All(ctx) {
		if err != nil {
			return answered, err
		}
		if _, err := quote.Call(ctx, m); err != nil {
			return answered, err
		}
		if answered++; answered == req.N {
			break
		}
	}
	return answered, nil
})

func startQuoting(env *workflowtest.Env, token string, n int) *workflowtest.Run[int] {
	return workflowtest.Start(env, quoting, struct {
		Token string
		N     int
	}{token, n})
}

// Row "Who creates the reply channel?": each resume call gets its own;
// concurrent resumes of one hook never cross.
func TestConcurrentResumesEachGetTheirOwnReply(t *testing.T) {
	const callers = 100
	env := workflowtest.New(t)
	run := startQuoting(env, "quotes:many", callers)
	env.RunUntilIdle()
	got := make([]Quote, callers)
	errs := make([]error, callers)
	env.While(func() {
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				got[i], errs[i] = quotes.Resume(context.Background(), env.Client, "quotes:many",
					Query{SKU: fmt.Sprintf("sku-%d", i), Qty: i})
			})
		}
		wg.Wait()
	})
	for i := range callers {
		if want := (Quote{SKU: fmt.Sprintf("sku-%d", i), Price: 10 * i, Note: fmt.Sprintf("SKU-%d-quoted", i)}); errs[i] != nil || got[i] != want {
			t.Fatalf("caller %d got %+v, %v; want %+v", i, got[i], errs[i], want)
		}
	}
	if n, err := run.Result(); err != nil || n != callers {
		t.Fatalf("run answered %d, %v", n, err)
	}
}

// Row "Where does the reply live?": in the stream storage, keyed per
// resume, not in the event log.
func TestTheReplyLivesInStreamStorageNotInTheLog(t *testing.T) {
	env := workflowtest.New(t)
	run := startQuoting(env, "quotes:one", 1)
	env.RunUntilIdle()
	var got Quote
	var err error
	env.While(func() {
		got, err = workflow.ResumeRespondingHook[Query, Quote](context.Background(), env.Client, "quotes:one", Query{SKU: "abc", Qty: 2})
	})
	if err != nil || got.Price != 20 || got.Note != "ABC-quoted" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := run.Result(); err != nil {
		t.Fatal(err)
	}
	var resumeID string
	for _, ev := range run.Events() {
		if strings.Contains(string(ev.Payload), "ABC-quoted") {
			t.Fatalf("the reply is in the log: %s", ev.Payload)
		}
		if ev.Type == world.HookReceived {
			var p struct{ ResumeID string }
			_ = json.Unmarshal(ev.Payload, &p)
			resumeID = p.ResumeID
		}
	}
	chunks, closed, err := env.World.ReadStream(context.Background(), engine.ReplyStream(resumeID), 0)
	if err != nil || !closed || len(chunks) != 1 || !strings.Contains(string(chunks[0]), "ABC-quoted") {
		t.Fatalf("reply stream of %s: %q closed=%v, %v", resumeID, chunks, closed, err)
	}
}

var respondTwice = workflow.DefineStep("reply.respondTwice", func(ctx context.Context, m workflow.HookMessage[string, string]) (bool, error) {
	if err := m.Respond(ctx, "first"); err != nil {
		return false, err
	}
	return errors.Is(m.Respond(ctx, "second"), workflow.ErrAlreadyResponded), nil
})

var respondAgain = workflow.DefineStep("reply.respondAgain", func(ctx context.Context, m workflow.HookMessage[string, string]) (bool, error) {
	return errors.Is(m.Respond(ctx, "third"), workflow.ErrAlreadyResponded), nil
})

var twice = workflow.Define("reply.twice", func(ctx workflow.Context, token string) (string, error) {
	m, err := workflow.CreateRespondingHook[string, string](ctx, workflow.WithToken(token)).Receive(ctx)
	if err != nil {
		return "", err
	}
	sameStep, err := respondTwice.Call(ctx, m)
	if err != nil {
		return "", err
	}
	otherStep, err := respondAgain.Call(ctx, m)
	return fmt.Sprintf("refused in the same step: %v, in another step: %v", sameStep, otherStep), err
})

// Row "How many replies per message?": exactly one; a second fails.
func TestASecondRespondFails(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, twice, "twice:1")
	env.RunUntilIdle()
	var got string
	var err error
	env.While(func() {
		got, err = workflow.ResumeRespondingHook[string, string](context.Background(), env.Client, "twice:1", "q")
	})
	if err != nil || got != "first" {
		t.Fatalf("caller got %q, %v", got, err)
	}
	res, err := run.Result()
	if err != nil || res != "refused in the same step: true, in another step: true" {
		t.Fatalf("run: %q, %v", res, err)
	}
}

var outside = workflow.Define("reply.outside", func(ctx workflow.Context, token string) (bool, error) {
	m, err := workflow.CreateRespondingHook[string, string](ctx, workflow.WithToken(token)).Receive(ctx)
	if err != nil {
		return false, err
	}
	// Workflow code has no step context to give.
	return errors.Is(m.Respond(context.Background(), "from workflow code"), workflow.ErrNotInStep), nil
})

// Rows "Where can respond() be called?" (in a step only) and "What if the
// workflow never replies?" (the caller fails once the run ends).
func TestRespondOnlyInAStepAndNoReplyFailsTheCaller(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, outside, "outside:1")
	env.RunUntilIdle()
	var err error
	env.While(func() {
		_, err = workflow.ResumeRespondingHook[string, string](context.Background(), env.Client, "outside:1", "q")
	})
	if !errors.Is(err, workflow.ErrHookResponseNotSent) {
		t.Fatalf("caller: %v, want ErrHookResponseNotSent", err)
	}
	if refused, err := run.Result(); err != nil || !refused {
		t.Fatalf("Respond from workflow code: refused=%v, %v", refused, err)
	}
}

var lateAnswer = workflow.DefineStep("reply.lateAnswer", func(ctx context.Context, ms []workflow.HookMessage[string, workflow.Stream[string]]) (int, error) {
	for _, m := range ms {
		if err := m.Respond(ctx, workflow.NewStream(func(yield func(string) bool) error {
			yield("one")
			yield("two")
			return nil
		})); err != nil {
			return 0, err
		}
	}
	return len(ms), nil
})

// gated answers its first three messages only when its gate hook is
// resumed, long after their callers stopped waiting.
var gated = workflow.Define("reply.gated", func(ctx workflow.Context, token string) (int, error) {
	h := workflow.CreateRespondingHook[string, workflow.Stream[string]](ctx, workflow.WithToken(token))
	var ms []workflow.HookMessage[string, workflow.Stream[string]]
	for len(ms) < 3 {
		m, err := h.Receive(ctx)
		if err != nil {
			return 0, err
		}
		ms = append(ms, m)
	}
	if _, err := workflow.CreateHook[struct{}](ctx, workflow.WithToken(token+":gate")).Receive(ctx); err != nil {
		return 0, err
	}
	return lateAnswer.Call(ctx, ms)
})

// Rows "What if the workflow never replies?" (a caller's deadline,
// cancellation and Timeout end its wait) and "What if the caller stops
// listening?" (the workflow is not disturbed: its Respond succeeds).
func TestCallersThatGiveUpDoNotDisturbTheWorkflow(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, gated, "gated:1")
	env.RunUntilIdle()
	errs := make([]error, 3)
	env.While(func() {
		var wg sync.WaitGroup
		wg.Go(func() {
			_, errs[0] = workflow.ResumeRespondingHook[string, workflow.Stream[string]](context.Background(), env.Client, "gated:1", "timeout", workflow.WithReplyTimeout(20*time.Millisecond))
		})
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, errs[1] = workflow.ResumeRespondingHook[string, workflow.Stream[string]](ctx, env.Client, "gated:1", "deadline")
		})
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			go func() { // cancel once all three messages are recorded
				for len(hookMessages(env.Events(run.ID))) < 3 {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(10 * time.Millisecond)
				cancel()
			}()
			_, errs[2] = workflow.ResumeRespondingHook[string, workflow.Stream[string]](ctx, env.Client, "gated:1", "cancel")
		})
		wg.Wait()
	})
	for i, want := range []error{context.DeadlineExceeded, context.DeadlineExceeded, context.Canceled} {
		if !errors.Is(errs[i], want) {
			t.Errorf("caller %d: %v, want %v", i, errs[i], want)
		}
	}
	if err := workflow.ResumeHook(context.Background(), env.Client, "gated:1:gate", struct{}{}); err != nil {
		t.Fatal(err)
	}
	if n, err := run.Result(); err != nil || n != 3 {
		t.Fatalf("the workflow answered %d with %v, want 3 answers without error", n, err)
	}
}

func hookMessages(evs []world.Event) []world.Event {
	var out []world.Event
	for _, ev := range evs {
		if ev.Type == world.HookReceived {
			out = append(out, ev)
		}
	}
	return out
}

// tokenGate holds the chat step between its first and second token until
// the caller has received the first.
var tokenGate chan struct{}

var streamAnswer = workflow.DefineStep("reply.streamAnswer", func(ctx context.Context, m workflow.HookMessage[string, workflow.Stream[string]]) (struct{}, error) {
	return struct{}{}, m.Respond(ctx, workflow.NewStream(func(yield func(string) bool) error {
		for i, tok := range strings.Fields(m.Data) {
			if i == 1 {
				<-tokenGate
			}
			if !yield(tok) {
				return nil
			}
		}
		return nil
	}))
})

var chatTurn = workflow.Define("reply.chatTurn", func(ctx workflow.Context, token string) (string, error) {
	m, err := workflow.CreateRespondingHook[string, workflow.Stream[string]](ctx, workflow.WithToken(token)).Receive(ctx)
	if err != nil {
		return "", err
	}
	_, err = streamAnswer.Call(ctx, m)
	return m.Data, err
})

// Row "What can a reply be?": anything, streams included; the caller
// ranges over a streamed reply as the step produces it.
func TestAStreamedReplyArrivesAsItIsProduced(t *testing.T) {
	tokenGate = make(chan struct{})
	env := workflowtest.New(t)
	run := workflowtest.Start(env, chatTurn, "chat:1")
	env.RunUntilIdle()
	var got []string
	var err error
	env.While(func() {
		var answer workflow.Stream[string]
		answer, err = workflow.ResumeRespondingHook[string, workflow.Stream[string]](context.Background(), env.Client, "chat:1", "hello streaming world")
		for tok, terr := range answer.All(context.Background()) {
			if terr != nil {
				err = terr
				return
			}
			if got = append(got, tok); len(got) == 1 {
				close(tokenGate) // the step was holding its second token until now
			}
		}
	})
	if err != nil || strings.Join(got, " ") != "hello streaming world" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := run.Result(); err != nil {
		t.Fatal(err)
	}
}

var noBackoff = workflow.WithBackoff(func(int) time.Duration { return 0 })

var flakyStream = workflow.DefineStep("reply.flakyStream", func(ctx context.Context, m workflow.HookMessage[string, workflow.Stream[string]]) (int, error) {
	info, _ := workflow.GetStepInfo(ctx)
	err := m.Respond(ctx, workflow.NewStream(func(yield func(string) bool) error {
		for _, s := range []string{"a", "b", "c"} {
			if info.Attempt == 1 && s == "c" {
				return errors.New("the model connection dropped")
			}
			yield(s)
		}
		return nil
	}))
	return info.Attempt, err
}, noBackoff)

var flakyValue = workflow.DefineStep("reply.flakyValue", func(ctx context.Context, m workflow.HookMessage[string, string]) (int, error) {
	info, _ := workflow.GetStepInfo(ctx)
	if err := m.Respond(ctx, fmt.Sprintf("from attempt %d", info.Attempt)); err != nil {
		return 0, err
	}
	if info.Attempt == 1 {
		return 0, errors.New("failed after responding")
	}
	return info.Attempt, nil
}, noBackoff)

var retried = workflow.Define("reply.retried", func(ctx workflow.Context, token string) (string, error) {
	streamHook := workflow.CreateRespondingHook[string, workflow.Stream[string]](ctx, workflow.WithToken(token+":stream"))
	valueHook := workflow.CreateRespondingHook[string, string](ctx, workflow.WithToken(token+":value"))
	s, err := streamHook.Receive(ctx)
	if err != nil {
		return "", err
	}
	streamAttempts, err := flakyStream.Call(ctx, s)
	if err != nil {
		return "", err
	}
	v, err := valueHook.Receive(ctx)
	if err != nil {
		return "", err
	}
	valueAttempts, err := flakyValue.Call(ctx, v)
	return fmt.Sprintf("stream step succeeded on attempt %d, value step on attempt %d", streamAttempts, valueAttempts), err
})

// Row "What happens on step retry?": the reply is sent again from the
// top. A streamed reply's reader is told (ErrReplyRestarted) and reads the
// retry's values; a reply already completed stays the one delivered.
func TestARetriedStepSendsTheReplyAgainFromTheTop(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, retried, "retried:1")
	env.RunUntilIdle()
	var seen []string
	var value string
	var err error
	env.While(func() {
		var answer workflow.Stream[string]
		answer, err = workflow.ResumeRespondingHook[string, workflow.Stream[string]](context.Background(), env.Client, "retried:1:stream", "q")
		for s, serr := range answer.All(context.Background()) {
			if errors.Is(serr, workflow.ErrReplyRestarted) {
				seen = append(seen, "RESTART")
				continue
			}
			if serr != nil {
				err = serr
				return
			}
			seen = append(seen, s)
		}
		if err == nil {
			value, err = workflow.ResumeRespondingHook[string, string](context.Background(), env.Client, "retried:1:value", "q")
		}
	})
	if err != nil || strings.Join(seen, " ") != "a b RESTART a b c" {
		t.Fatalf("streamed reply read as %q, %v", seen, err)
	}
	if value != "from attempt 1" {
		t.Fatalf("value reply %q, want the completed reply of attempt 1", value)
	}
	res, err := run.Result()
	if err != nil || res != "stream step succeeded on attempt 2, value step on attempt 2" {
		t.Fatalf("run: %q, %v", res, err)
	}
}

// Row "Can a plain createHook() reply?": no; resuming one as a responding
// hook fails and writes nothing.
func TestAPlainHookCannotBeResumedAsARespondingHook(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, collector, "collect:plain")
	env.RunUntilIdle()
	before := len(run.Events())
	_, err := workflow.ResumeRespondingHook[string, string](context.Background(), env.Client, "collect:plain", "q")
	if !errors.Is(err, workflow.ErrNotRespondingHook) {
		t.Fatalf("err = %v, want ErrNotRespondingHook", err)
	}
	if n := len(run.Events()); n != before {
		t.Fatalf("the refused message was written: %d events, want %d", n, before)
	}
}
