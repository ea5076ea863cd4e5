// Command awscrash is the worker process the AWS World's crash matrix and
// throttling storm drive (world/aws crash_test.go). It starts runs of a
// five-step workflow that sleeps between its third and fourth step, serves
// them, and exits once every one has completed. Each step attempt appends
// a line to an effects file outside the World, so the test can count what
// ran across processes. Started again after a kill, it retries the same
// Starts, as a client would.
//
//	awscrash -effects FILE [-runs N] [-visibility 4s] [-lease 3s] [-sleep 6s]
//	awscrash -effects FILE -doomed
//
// With -doomed it starts (again, after a kill) the run "doomed" instead,
// whose one step never returns, and serves until that run has ended.
//
// Runs are named five-0, five-1, … The World comes from the environment
// (aws.FromEnv; AWS_ENDPOINT_URL points it at the test's fault-injecting
// proxy). The runs are started at once; a failed Start is retried a few
// times, each failure reported on stderr, and exit status 3 says a run
// could not be started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// Steps is how many steps a run does.
const Steps = 5

var effects *os.File

// effect is a step with a side effect outside the World: one line per
// attempt ("<run> <step ID> <attempt>"), written before the step's result can be recorded. Even steps
// take 100 ms, so their step_started is written on its own (after 25 ms)
// and a kill can fall between an attempt's start and its result; odd ones
// are instant, one write with their result.
var effect = workflow.DefineStep("awscrash.effect", func(ctx context.Context, step int) (int, error) {
	info, _ := workflow.GetStepInfo(ctx)
	// One write(2) on an O_APPEND file: whole lines, and a SIGKILL cannot
	// lose a line once written.
	if _, err := fmt.Fprintf(effects, "%s %s %d\n", info.RunID, info.StepID, info.Attempt); err != nil {
		return 0, err
	}
	if step%2 == 0 {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return step * step, nil
})

// endless never returns and ignores its context, as a step stuck in a
// computation does: only a kill ends an attempt. Its declared timeout puts
// a deadline in each attempt's step_started that has passed by the time
// the test kills it. Each attempt appends "doomed <attempt>".
var endless = workflow.DefineStep("awscrash.endless", func(ctx context.Context, _ string) (string, error) {
	info, _ := workflow.GetStepInfo(ctx)
	if _, err := fmt.Fprintf(effects, "doomed %d\n", info.Attempt); err != nil {
		return "", err
	}
	<-make(chan struct{})
	return "", nil
}, workflow.WithTimeout(300*time.Millisecond), workflow.WithMaxRetries(2),
	workflow.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))

// Doomed runs the endless step.
var Doomed = workflow.Define("awscrash.doomed", func(ctx workflow.Context, _ string) (string, error) {
	return endless.Call(ctx, "")
})

// Five runs the five steps one after another and sums their results. It
// sleeps before the fourth step; a sleep longer than the worker's
// InlineWait suspends the run with a wake-up message (a dedup marker, a
// delayed send), and one longer than the visibility timeout outlasts the
// redelivery of a message whose worker was killed.
var Five = workflow.Define("awscrash.five", func(ctx workflow.Context, sleep time.Duration) (int, error) {
	sum := 0
	for step := 1; step <= Steps; step++ {
		if step == 4 {
			workflow.Sleep(ctx, sleep)
		}
		r, err := effect.Call(ctx, step)
		if err != nil {
			return 0, err
		}
		sum += r
	}
	return sum, nil
})

func main() {
	path := flag.String("effects", "", "the effects file")
	runs := flag.Int("runs", 1, "how many runs to start and serve")
	// The visibility timeout must outlast an invocation, as the Worker
	// asks: a message that comes back while its invocation still works
	// queues another delivery behind it. At 1 s that fed itself on a busy
	// emulator: a finished run's delivery took over a second, came back
	// before its Ack, again and again, until every slot of the worker
	// waited on the one run and it never went idle. 4 s is twice what an
	// invocation takes when each call to the emulator takes 250 ms; the
	// 6 s sleep still brings a killed worker's message back before the
	// wake-up.
	visibility := flag.Duration("visibility", 4*time.Second, "the worker's visibility timeout")
	lease := flag.Duration("lease", 3*time.Second, "the worker's run lease TTL: how long a killed worker's run waits")
	sleep := flag.Duration("sleep", 6*time.Second, "the runs' sleep before their fourth step")
	doomed := flag.Bool("doomed", false, "start and serve the run of the endless step instead")
	flag.Parse()
	var err error
	if effects, err = os.OpenFile(*path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	w, err := aws.FromEnv(ctx)
	if err != nil {
		log.Fatal(err)
	}
	serve, stop := context.WithCancel(ctx)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Visibility: *visibility, LeaseTTL: *lease})
	served := make(chan error, 1)
	go func() { served <- worker.Run(serve) }()
	if *doomed {
		if _, err := workflow.Start(ctx, workflow.NewClient(w), Doomed, "", workflow.WithRunID("doomed")); err != nil {
			log.Print(err)
			os.Exit(3)
		}
		waitEnded(ctx, w, "doomed")
	} else {
		ids := make([]string, *runs)
		for i := range ids {
			ids[i] = fmt.Sprintf("five-%d", i)
		}
		if err := startAll(ctx, workflow.NewClient(w), ids, *sleep); err != nil {
			log.Print(err)
			os.Exit(3)
		}
		waitCompleted(ctx, w, ids, worker)
	}
	stop()
	if err := <-served; err != nil {
		log.Fatal(err)
	}
}

// startAll starts the runs at once, retrying a failed Start (at most
// startTries times) as a client would.
func startAll(ctx context.Context, c *workflow.Client, ids []string, sleep time.Duration) error {
	const startTries = 10
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			for try := 1; ; try++ {
				_, err := workflow.Start(ctx, c, Five, sleep, workflow.WithRunID(id))
				if err == nil {
					return
				}
				log.Printf("start %s (try %d): %v", id, try, err)
				if try == startTries {
					errs[i] = fmt.Errorf("start %s failed %d times", id, try)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitCompleted returns once every run has completed and the worker is idle
// (its last Ack sent), so that a clean run's writes are all counted. It
// checks twice a second.
func waitCompleted(ctx context.Context, w world.World, ids []string, worker *workflow.Worker) {
	for pending := ids; ; time.Sleep(500 * time.Millisecond) {
		var still []string
		for _, id := range pending {
			run, err := w.GetRun(ctx, id)
			if err != nil && !errors.Is(err, world.ErrRunNotFound) {
				log.Printf("get run %s: %v", id, err)
			}
			if err != nil || run.Status != world.StatusCompleted {
				still = append(still, id)
			}
		}
		if pending = still; len(pending) == 0 && worker.Busy() == 0 {
			return
		}
	}
}

// waitEnded returns once the run has ended, whichever way; it checks
// twice a second.
func waitEnded(ctx context.Context, w world.World, id string) {
	for ; ; time.Sleep(500 * time.Millisecond) {
		if run, err := w.GetRun(ctx, id); err == nil && run.Status.Terminal() {
			return
		}
	}
}
