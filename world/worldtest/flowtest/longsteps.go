package flowtest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// RunLongSteps runs the mixed deployment on the Worlds newWorld returns:
// two workers whose invocations live lambdaLife, as a Lambda function's
// do, send the runs whose next step fits none of their invocations to a
// long-step queue (WorkerOptions.LongStepQueue), and a Worker without a
// time limit serves that queue (WorkerOptions.Queue). longQueue returns
// that queue for w: a queue other than w's own.
func RunLongSteps(t *testing.T, newWorld func(*testing.T) world.World, longQueue func(*testing.T, world.World) world.Queue) {
	t.Run("LongStepRunsOnAWorkerWithoutALimit", func(t *testing.T) {
		w := newWorld(t)
		longStepRunsOnAPlainWorker(t, w, longQueue(t, w))
	})
}

// longStepWorkers says which worker ran the marathon of which run: every
// worker of the scenario replaces its function with one of its own.
type longStepWorkers struct {
	mu      sync.Mutex
	ran     map[string]map[string]int // worker -> run key -> attempts
	started chan string               // run keys, as their marathon starts
}

// as is the marathon as the worker named worker runs it: it records the
// attempt, says it started, and takes a while, so that redeliveries
// arrive while it runs.
func (l *longStepWorkers) as(worker string) workflow.StepReplacement {
	return marathon.Replace(func(ctx context.Context, key string) (string, error) {
		l.mu.Lock()
		if l.ran[worker] == nil {
			l.ran[worker] = map[string]int{}
		}
		l.ran[worker][key]++
		l.mu.Unlock()
		l.started <- key
		select {
		case <-time.After(500 * time.Millisecond):
			return worker, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
}

func (l *longStepWorkers) attempts(worker, key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ran[worker][key]
}

// marathon declares as long as a whole invocation of the short workers
// lives: it fits none of them. Each worker replaces it (longStepWorkers).
var marathon = workflow.DefineStep("flowtest.longsteps.marathon", func(context.Context, string) (string, error) {
	return "", workflow.Fatal(errors.New("the scenario's workers each replace this step"))
}, workflow.WithTimeout(lambdaLife), workflow.WithMaxRetries(0))

var legUp = workflow.DefineStep("flowtest.longsteps.leg", func(_ context.Context, key string) (string, error) {
	return key, nil
})

// marathonRun runs a short step, the marathon, and a short step again.
var marathonRun = workflow.Define("flowtest.longsteps.run", func(ctx workflow.Context, key string) (string, error) {
	if _, err := legUp.Call(ctx, key); err != nil {
		return "", err
	}
	ranBy, err := marathon.Call(ctx, key)
	if err != nil {
		return "", err
	}
	if _, err := legUp.Call(ctx, key); err != nil {
		return "", err
	}
	return ranBy, nil
})

// longStepRunsOnAPlainWorker: three runs at once, each a step that fits
// no invocation of the two short workers between two that do. Each
// marathon runs once, on the plain worker, never started by a short one,
// after one message to the long-step queue per run; while it runs, its
// run's message is delivered again on both queues, and the run still
// completes with the step run once and no attempt failed.
func longStepRunsOnAPlainWorker(t *testing.T, w world.World, long world.Queue) {
	const runs = 3
	workers := &longStepWorkers{ran: map[string]map[string]int{}, started: make(chan string, 2*runs)}
	counted := &countedQueue{Queue: long, sent: map[string]int{}}
	short := func(name string) workflow.WorkerOptions {
		return workflow.WorkerOptions{MaxInvocation: lambdaLife, LongStepQueue: counted, Replace: []workflow.StepReplacement{workers.as(name)}}
	}
	e := newEnvWith(t, w, short("short-1"), nil)
	newEnvWith(t, w, short("short-2"), nil)
	newEnvWith(t, w, workflow.WorkerOptions{Queue: long, Replace: []workflow.StepReplacement{workers.as("plain")}}, nil)

	byKey := map[string]*workflow.Run[string]{}
	for range runs {
		key := unique("marathon")
		byKey[key] = start(t, e, marathonRun, key)
	}
	for range runs {
		var key string
		select {
		case key = <-workers.started:
		case <-e.ctx.Done():
			t.Fatal("a marathon never started")
		}
		redelivered := world.Message{RunID: byKey[key].ID}
		if err := w.Enqueue(e.ctx, redelivered); err != nil {
			t.Fatal(err)
		}
		if err := long.Enqueue(e.ctx, redelivered); err != nil {
			t.Fatal(err)
		}
	}
	for key, run := range byKey {
		if got := result(t, e, run); got != "plain" {
			t.Errorf("run %s: the marathon ran on %q, want the plain worker", run.ID, got)
		}
		for worker, want := range map[string]int{"plain": 1, "short-1": 0, "short-2": 0} {
			if n := workers.attempts(worker, key); n != want {
				t.Errorf("run %s: %s started the marathon %d times, want %d", run.ID, worker, n, want)
			}
		}
		if n := counted.sentFor(run.ID); n != 1 {
			t.Errorf("run %s: %d messages to the long-step queue, want 1", run.ID, n)
		}
		evs, err := w.Events(e.ctx, run.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == world.StepRetrying || ev.Type == world.StepFailed {
				t.Errorf("run %s, slot %d: %s %s: no attempt should fail", run.ID, ev.Slot, ev.Type, ev.Payload)
			}
		}
	}
}

// countedQueue counts the long-step hand-offs enqueued per run.
type countedQueue struct {
	world.Queue
	mu   sync.Mutex
	sent map[string]int
}

func (q *countedQueue) Enqueue(ctx context.Context, msg world.Message) error {
	if strings.Contains(msg.DedupKey, "/long/") {
		q.mu.Lock()
		q.sent[msg.RunID]++
		q.mu.Unlock()
	}
	return q.Queue.Enqueue(ctx, msg)
}

func (q *countedQueue) sentFor(runID string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sent[runID]
}
