// Package flowtest runs end-to-end scenarios of hooks, responding hooks,
// webhooks and streams with a real workflow.Worker on any World:
//
//	func TestFlows(t *testing.T) {
//		flowtest.Run(t, func(t *testing.T) world.World { return New() })
//	}
//
// Where world/worldtest checks a World's operations one by one, flowtest
// checks that the runtime built on them keeps its promises: tokens are
// unique and follow takeovers, every caller gets its own reply, replies
// and run streams arrive as they are written and end with the run.
//
// newWorld is called once per scenario and may return a fresh World or a
// shared one: scenarios use unique tokens and run one after another, each
// with its own worker. Each takes well under two seconds on a local World,
// but for the waiter scenarios, which measure a waiter for four.
package flowtest

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// Run runs every scenario against the Worlds newWorld returns.
func Run(t *testing.T, newWorld func(t *testing.T) world.World) {
	for _, s := range append(scenarios, waiterScenarios()...) {
		t.Run(s.name, func(t *testing.T) { s.run(t, newEnv(t, newWorld(t))) })
	}
	for _, s := range releaseScenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, newEnv(t, withSlowRelease(newWorld(t)))) })
	}
	for _, s := range continueScenarios {
		t.Run(s.name, func(t *testing.T) {
			warns := &ceilingLog{}
			e := newEnvWith(t, newWorld(t), workflow.WorkerOptions{MaxEvents: chainMaxEvents}, slog.NewTextHandler(warns, nil))
			e.warns = warns
			s.run(t, e)
		})
	}
	for _, s := range limitScenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, newEnv(t, newWorld(t))) })
	}
	for _, s := range codecScenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, newWorld(t)) })
	}
	for _, s := range durationScenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, newDurationEnv(t, newWorld(t))) })
	}
	for _, s := range stuckScenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, newStuckEnv(t, newWorld(t))) })
	}
	for _, s := range dynamicScenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, newDynamicEnv(t, newWorld(t))) })
	}
}

type scenario struct {
	name string
	run  func(t *testing.T, e *env)
}

var scenarios = []scenario{
	{"HookMessagesInOrder", hookMessagesInOrder},
	{"HookTokenConflict", hookTokenConflict},
	{"HookForceTakeover", hookForceTakeover},
	{"RespondingHookReplies", respondingHookReplies},
	{"RespondingHookConcurrentCallers", respondingHookConcurrentCallers},
	{"RespondingHookCrowd", respondingHookCrowd},
	{"RespondingHookRacesTheEnd", respondingHookRacesTheEnd},
	{"RespondingHookStreamedReply", respondingHookStreamedReply},
	{"RespondingHookNoReply", respondingHookNoReply},
	{"RespondingHookRejectsUndecodable", respondingHookRejectsUndecodable},
	{"PlainHookDoesNotReply", plainHookDoesNotReply},
	{"Webhook", webhookRoute},
	{"WebhookRecordsAllowedHeaders", webhookRecordsAllowedHeaders},
	{"RunStream", runStream},
	{"OverlappingInvocations", overlappingInvocations},
	{"ResumeDuringAStep", resumeDuringAStep},
	{"ReleaseSeesLateEvents", releaseSeesLateEvents},
	{"SecondDeliveryIsDeferred", secondDeliveryIsDeferred},
	{"StalledHolderIsFenced", stalledHolderIsFenced},
	{"PatchAcrossADeploy", patchAcrossADeploy},
	{"WarmInstances", warmInstances},
	{"WarmStateOutlivesACrash", warmStateOutlivesACrash},
	{"AttributesSetJustBeforeReturn", attributesSetJustBeforeReturn},
	{"ChildStartedJustBeforeReturn", childStartedJustBeforeReturn},
}

// env is one scenario's World, client and worker.
type env struct {
	ctx    context.Context
	world  world.World
	client *workflow.Client
	log    *slog.Logger   // to the test, for the scenario's own workers
	warns  *ceilingLog    // if set, counts the workers' warnings of a nearly full log
	served sync.WaitGroup // the workers a dynamic scenario serves with (dynamic.go)
}

func (e *env) ceilingWarnings() int {
	e.warns.mu.Lock()
	defer e.warns.mu.Unlock()
	return e.warns.lines
}

// scenarioBound is how long a scenario may take before it fails as hung.
// It bounds a stuck scenario and measures no speed: the longest,
// RespondingHookConcurrentCallers, answers its 20 messages one after
// another, about 140 World calls in sequence (700-860 in all on the AWS
// World), which takes 1-2 s on a quiet emulator and crossed the former
// 10 s once a busy emulator answered in 70 ms; 30 s allows 200 ms.
const scenarioBound = 30 * time.Second

// newEnv starts a worker on w for the scenario's lifetime; the scenario's
// context bounds it, so a World that never answers fails the scenario
// instead of hanging it. The worker logs to the test until the scenario
// ends; what it says while it stops (work cut short) is dropped.
func newEnv(t *testing.T, w world.World) *env { return newEnvWith(t, w, workflow.WorkerOptions{}, nil) }

// newEnvWith is newEnv with the worker's options; its Logger, set here,
// writes to also too if given.
func newEnvWith(t *testing.T, w world.World, opts workflow.WorkerOptions, also slog.Handler) *env {
	ctx, cancel := context.WithTimeout(t.Context(), scenarioBound)
	log := &testLog{t: t}
	done := make(chan struct{})
	t.Cleanup(func() {
		log.stop()
		cancel()
		<-done
	})
	var handler slog.Handler = slog.NewTextHandler(log, nil)
	if also != nil {
		handler = slog.NewMultiHandler(handler, also)
	}
	logger := slog.New(handler)
	opts.Logger = logger
	go func() {
		defer close(done)
		_ = workflow.NewWorker(w, opts).Run(ctx)
	}()
	return &env{ctx: ctx, world: w, client: workflow.NewClient(w), log: logger}
}

// testLog writes to the test's log until stopped.
type testLog struct {
	t       *testing.T
	mu      sync.Mutex
	stopped bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func (l *testLog) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}

// unique returns prefix with a random suffix, so scenarios sharing a World
// never meet.
func unique(prefix string) string { return prefix + ":" + rand.Text() }

func start[I, O any](t *testing.T, e *env, wf *workflow.Workflow[I, O], input I) *workflow.Run[O] {
	t.Helper()
	run, err := workflow.Start(e.ctx, e.client, wf, input)
	if err != nil {
		t.Fatalf("start %s: %v", wf.Name(), err)
	}
	return run
}

// waitForHook waits until token is held, by any run.
func waitForHook(t *testing.T, e *env, token string) workflow.HookInfo {
	t.Helper()
	for {
		info, err := e.client.GetHook(e.ctx, token)
		if err == nil {
			return info
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("hook %q never appeared: %v", token, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func result[O any](t *testing.T, e *env, run *workflow.Run[O]) O {
	t.Helper()
	out, err := run.Result(e.ctx)
	if err != nil {
		t.Fatalf("run %s: %v", run.ID, err)
	}
	return out
}
