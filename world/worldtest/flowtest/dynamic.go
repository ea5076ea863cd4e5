package flowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/dynamic"
	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/world"
)

// Dynamic workflows (package dynamic) on every World: runs whose code is
// stored with them. Each scenario starts the workers it needs, so that it
// decides which code and which step implementations drive each part of a
// run.
var dynamicScenarios = []scenario{
	{"DynamicReplaysItsStoredSource", dynamicReplaysItsStoredSource},
	{"DynamicHookSurvivesAWorkerDeath", dynamicHookSurvivesAWorkerDeath},
	{"DynamicRefusalsWriteNothing", dynamicRefusalsWriteNothing},
	{"DynamicLoopHitsTheExecutionLimit", dynamicLoopHitsTheExecutionLimit},
	{"DynamicParallelJoin", dynamicParallelJoin},
	{"DynamicSourceSealed", dynamicSourceSealed},
}

// newDynamicEnv is an env with no worker: the scenario serves its World
// with workers it starts and stops itself. The scenario ends once they
// have all stopped: on a shared World, a worker left running would drive
// the next scenario's runs with this one's code and step implementations.
func newDynamicEnv(t *testing.T, w world.World) *env {
	ctx, cancel := context.WithTimeout(t.Context(), scenarioBound)
	log := &testLog{t: t}
	t.Cleanup(log.stop)
	e := &env{ctx: ctx, world: w, client: workflow.NewClient(w), log: slog.New(slog.NewTextHandler(log, nil))}
	t.Cleanup(func() {
		cancel()
		e.served.Wait()
	})
	return e
}

// serve runs a worker that executes dynamic runs until the returned stop
// is called (or the scenario ends); stop returns once it has stopped.
func (e *env) serve(opts workflow.WorkerOptions) (stop func()) {
	opts.DynamicWorkflows, opts.Logger = true, e.log
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	e.served.Go(func() {
		defer close(done)
		_ = workflow.NewWorker(e.world, opts).Run(ctx)
	})
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	context.AfterFunc(e.ctx, stop)
	return stop
}

func startDynamic[O any](t *testing.T, e *env, code string, steps dynamic.Steps, input any, opts ...dynamic.StartOption) *workflow.Run[O] {
	t.Helper()
	run, err := dynamic.Start[O](e.ctx, e.client, code, steps, input, append(opts, dynamic.WithEnabled(true))...)
	if err != nil {
		t.Fatalf("dynamic start: %v", err)
	}
	return run
}

// dynamicCalls counts step executions by key (the step's input prefix),
// so a scenario sees what ran again and what was replayed.
var dynamicCalls sync.Map

func countCall(key string) int64 {
	n, _ := dynamicCalls.LoadOrStore(key, new(atomic.Int64))
	return n.(*atomic.Int64).Add(1)
}

func callsOf(key string) int64 {
	n, ok := dynamicCalls.Load(key)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

var (
	dynTagA = workflow.DefineStep("flowtest.dynamic.tagA", func(_ context.Context, s string) (string, error) {
		countCall(s)
		return "A:" + s, nil
	})
	dynTagB = workflow.DefineStep("flowtest.dynamic.tagB", func(_ context.Context, s string) (string, error) {
		return "B:" + s, nil
	})
)

const (
	// sourceOne tags its input, waits for a message, tags that and says
	// which source it is.
	sourceOne = `
def workflow(input):
    first = steps.tag(input["key"])
    msg = hook(token = input["token"]).receive()
    return [first, steps.tag(msg), "source one"]
`
	sourceTwo = `
def workflow(input):
    return [steps.tag(input["key"]), "source two"]
`
)

// dynamicReplaysItsStoredSource: a dynamic run waiting on a hook is
// resumed after everything a deployment could swap has changed: the
// worker that ran it is gone, the caller now starts another source with
// the alias bound to another step, and the step's implementation was
// replaced. The run replays the code and the step binding it was started
// with (its first step's result from the log, not run again) and runs
// only its remaining step on the new implementation; its first event
// holds that code under its hash.
func dynamicReplaysItsStoredSource(t *testing.T, e *env) {
	key, token := unique("dyn-replay"), unique("dyn-replay-hook")
	stop := e.serve(workflow.WorkerOptions{})
	run := startDynamic[[]string](t, e, sourceOne, dynamic.Steps{"tag": dynTagA}, map[string]string{"key": key, "token": token})
	waitForHook(t, e, token)
	stop()

	other := startDynamic[[]string](t, e, sourceTwo, dynamic.Steps{"tag": dynTagB}, map[string]string{"key": key})
	e.serve(workflow.WorkerOptions{Replace: []workflow.StepReplacement{
		dynTagA.Replace(func(_ context.Context, s string) (string, error) { return "A2:" + s, nil }),
	}})
	if err := workflow.ResumeHook(e.ctx, e.client, token, "later"); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(result(t, e, run), " "), "A:"+key+" A2:later source one"; got != want {
		t.Errorf("the run in flight returned %q, want %q", got, want)
	}
	if n := callsOf(key); n != 1 {
		t.Errorf("its first step ran %d times, want once: replay must take its result from the log", n)
	}
	if got, want := strings.Join(result(t, e, other), " "), "B:"+key+" source two"; got != want {
		t.Errorf("the second source's run returned %q, want %q", got, want)
	}

	events, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ Input json.RawMessage }
	if err := json.Unmarshal(events[0].Payload, &created); err != nil || events[0].Type != world.RunCreated {
		t.Fatalf("first event %s: %v", events[0].Type, err)
	}
	stored, err := dynsource.Decode(created.Input)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Source.Code != sourceOne || stored.Source.SHA256 != dynsource.Hash(sourceOne) || stored.Source.Steps["tag"] != dynTagA.Name() {
		t.Errorf("run_created stores %+v, want source one under its hash with tag bound to %s", stored.Source, dynTagA.Name())
	}
}

// dynamicHookSurvivesAWorkerDeath: the worker that ran a dynamic run up
// to its hook stops for good; the resume's message, delivered to a fresh
// worker and twice more to another at the same time, completes the run
// once: its first step ran once, every step is in the log once.
func dynamicHookSurvivesAWorkerDeath(t *testing.T, e *env) {
	key, token := unique("dyn-crash"), unique("dyn-crash-hook")
	stop := e.serve(workflow.WorkerOptions{})
	run := startDynamic[[]string](t, e, sourceOne, dynamic.Steps{"tag": dynTagA}, map[string]string{"key": key, "token": token})
	waitForHook(t, e, token)
	stop()
	if err := workflow.ResumeHook(e.ctx, e.client, token, key+"/2"); err != nil {
		t.Fatal(err)
	}
	e.serve(workflow.WorkerOptions{})
	redelivered := workflow.NewWorker(e.world, workflow.WorkerOptions{DynamicWorkflows: true, Logger: e.log})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _ = redelivered.Process(e.ctx, run.ID) })
	}
	wg.Wait()
	if got, want := strings.Join(result(t, e, run), " "), "A:"+key+" A:"+key+"/2 source one"; got != want {
		t.Errorf("the run returned %q, want %q", got, want)
	}
	if a, b := callsOf(key), callsOf(key+"/2"); a != 1 || b != 1 {
		t.Errorf("the steps ran %d and %d times, want once each", a, b)
	}
	events, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := countEvents(events, world.StepCompleted); n != 2 {
		t.Errorf("the log records %d completed steps, want 2", n)
	}
}

func countEvents(events []world.Event, typ world.EventType) int {
	n := 0
	for _, ev := range events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// dynamicRefusalsWriteNothing: a start the deployment could not run is
// refused with its reason, and no run of it exists; on a World that counts
// its calls, the refusals made none.
func dynamicRefusalsWriteNothing(t *testing.T, e *env) {
	counter, counts := e.world.(interface{ Calls() map[string]int64 })
	steps := dynamic.Steps{"tag": dynTagA}
	for _, c := range []struct {
		name, code string
		opts       []dynamic.StartOption
		want       string
	}{
		{"off", sourceTwo, []dynamic.StartOption{dynamic.WithEnabled(false)}, "dynamic workflows are off"},
		{"syntax", "def workflow(input):\n    return (\n", nil, "workflow.star:3:1"},
		{"unknown alias", "def workflow(input):\n    return steps.nope(1)\n", nil, "workflow.star:2:18: steps.nope"},
		{"too large", sourceTwo, []dynamic.StartOption{dynamic.WithMaxSourceBytes(10)}, "the limit is 10"},
	} {
		id := unique("dyn-refused")
		opts := append([]dynamic.StartOption{dynamic.WithEnabled(true), dynamic.WithRunID(id)}, c.opts...)
		var before map[string]int64
		if counts {
			before = counter.Calls()
		}
		_, err := dynamic.Start[string](e.ctx, e.client, c.code, steps, "x", opts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Start returned %v, want an error containing %q", c.name, err, c.want)
		}
		if counts {
			if after := counter.Calls(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("%s: the refusal made World calls: %v, then %v", c.name, before, after)
			}
		}
		if _, err := e.world.GetRun(e.ctx, id); !errors.Is(err, world.ErrRunNotFound) {
			t.Errorf("%s: GetRun of the refused run returned %v, want ErrRunNotFound", c.name, err)
		}
	}
}

// dynamicLoopHitsTheExecutionLimit: a loop that makes no durable call
// fails its run with an error naming the limit and the line, instead of
// holding the worker.
func dynamicLoopHitsTheExecutionLimit(t *testing.T, e *env) {
	e.serve(workflow.WorkerOptions{})
	code := "def workflow(input):\n    n = 0\n    while True:\n        n += 1\n"
	run := startDynamic[string](t, e, code, nil, nil, dynamic.WithMaxExecutionSteps(100_000))
	_, err := run.Result(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "without a durable call") || !strings.Contains(err.Error(), "workflow.star:4") {
		t.Errorf("the looping run ended with %v, want the execution limit at workflow.star:4", err)
	}
}

// dynBarrier returns only once every branch of its fan-out has started,
// so a fan-out that ran its branches one at a time would time out.
var dynBarrier = workflow.DefineStep("flowtest.dynamic.barrier", func(ctx context.Context, in struct {
	Key   string
	Width int
	I     int
}) (int, error) {
	countCall(in.Key)
	deadline := time.Now().Add(10 * time.Second)
	for callsOf(in.Key) < int64(in.Width) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, workflow.Fatal(fmt.Errorf("only %d of %d branches started together", callsOf(in.Key), in.Width))
		}
		time.Sleep(2 * time.Millisecond)
	}
	return in.I * in.I, nil
})

// dynamicParallelJoin: spawned steps run at the same time and join
// returns their results in spawn order; first() takes a hook that comes
// before its timer.
func dynamicParallelJoin(t *testing.T, e *env) {
	e.serve(workflow.WorkerOptions{})
	key, token := unique("dyn-fan"), unique("dyn-fan-hook")
	code := `
def workflow(input):
    fs = [spawn(steps.square, key = input["key"], width = 6, i = i) for i in range(6)]
    squares = join(fs)
    which, msg = first([hook(token = input["token"]), timer("1h")])
    return {"squares": squares, "which": which, "msg": msg}
`
	run := startDynamic[struct {
		Squares []int
		Which   int
		Msg     string
	}](t, e, code, dynamic.Steps{"square": dynBarrier}, map[string]string{"key": key, "token": token})
	waitForHook(t, e, token)
	if err := workflow.ResumeHook(e.ctx, e.client, token, "in time"); err != nil {
		t.Fatal(err)
	}
	out := result(t, e, run)
	if fmt.Sprint(out.Squares) != "[0 1 4 9 16 25]" || out.Which != 0 || out.Msg != "in time" {
		t.Errorf("the run returned %+v, want squares [0 1 4 9 16 25] and the hook's message first", out)
	}
}

// dynamicSourceSealed: a dynamic run started through an encrypting codec
// stores no byte of its source, its step's result or what it wrote to its
// stream in the clear, and runs on a worker with the key; a plain dynamic run (its code writable by anyone with access to
// the storage) reaching that worker fails instead of running.
func dynamicSourceSealed(t *testing.T, e *env) {
	chain := chainOf(t, "k1", newKeyring(t, "k1"))
	e.serve(workflow.WorkerOptions{Codec: chain})
	sealedClient := workflow.NewClient(e.world, workflow.WithPayloadCodec(chain))
	code := "def workflow(input):\n    write(\"said " + secret + "\")\n    return steps.tag(\"" + secret + "\")\n"
	run, err := dynamic.Start[string](e.ctx, sealedClient, code, dynamic.Steps{"tag": dynTagB}, nil, dynamic.WithEnabled(true))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(e.ctx); out != "B:"+secret || err != nil {
		t.Errorf("the sealed dynamic run returned %q, %v", out, err)
	}
	if raw := stored(t, e, run.ID); bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("def workflow")) {
		t.Error("the World holds the sealed run's source in the clear")
	}

	plain := startDynamic[string](t, e, code, dynamic.Steps{"tag": dynTagB}, nil)
	if _, err := plain.Result(e.ctx); err == nil || !strings.Contains(err.Error(), "stored source is not encrypted") {
		t.Errorf("a plain dynamic run on an encrypting worker ended with %v, want it refused", err)
	}
}
