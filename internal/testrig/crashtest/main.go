// Command crashtest is the process the crash-and-restart tests kill: it
// serves workflows from an embedded World and journals every step attempt
// to a file, so the test can count what ran, across processes.
//
//	crashtest -dir DATA -journal FILE [-start] [-dynamic TOKEN] [-doomed]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/dynamic"
	"github.com/lambdaworkflow/workflow/internal/testrig/crashtest/journal"
	"github.com/lambdaworkflow/workflow/world/local"
)

// jour is where every step or tool attempt is noted.
var jour *journal.Journal

// work journals its start and end; the gap is where a kill lands.
var work = workflow.DefineStep("crash.work", func(ctx context.Context, name string) (string, error) {
	info, _ := workflow.GetStepInfo(ctx)
	jour.Note("start %s %s", info.RunID, name)
	select {
	case <-time.After(150 * time.Millisecond):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	jour.Note("done %s %s", info.RunID, name)
	return name + " ok", nil
})

// Sleeper does three steps, sleeps, and does two more.
var Sleeper = workflow.Define("crash.sleeper", func(ctx workflow.Context, sleep time.Duration) ([]string, error) {
	var out []string
	for i, phase := range []string{"a", "b", "c", "sleep", "d", "e"} {
		if phase == "sleep" {
			workflow.Sleep(ctx, sleep)
			continue
		}
		r, err := work.Call(ctx, fmt.Sprintf("%d-%s", i, phase))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
})

// dynamicSource works, waits on a hook, and works again: the dynamic
// run a test kills the process under while it waits.
const dynamicSource = `
def workflow(token):
    first = steps.work("before-hook")
    message = hook(token = token).receive()
    return [first, message, steps.work("after-hook")]
`

// Stepper runs twenty steps back to back: a kill lands in one of them.
var Stepper = workflow.Define("crash.stepper", func(ctx workflow.Context, n int) (int, error) {
	for i := range n {
		if _, err := work.Call(ctx, fmt.Sprintf("step-%02d", i)); err != nil {
			return 0, err
		}
	}
	return n, nil
})

// endless never returns and ignores its context, as a step stuck in a
// computation does: only the kill ends an attempt. Its declared timeout
// puts a deadline in each attempt's step_started that has passed by the
// time the test kills it.
var endless = workflow.DefineStep("crash.endless", func(ctx context.Context, _ string) (string, error) {
	info, _ := workflow.GetStepInfo(ctx)
	jour.Note("start endless %d", info.Attempt)
	<-make(chan struct{})
	return "", nil
}, workflow.WithTimeout(300*time.Millisecond), workflow.WithMaxRetries(2),
	workflow.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))

// Doomed runs the endless step.
var Doomed = workflow.Define("crash.doomed", func(ctx workflow.Context, _ string) (string, error) {
	return endless.Call(ctx, "")
})

func main() {
	dir := flag.String("dir", "", "data directory")
	path := flag.String("journal", "", "journal file")
	start := flag.Bool("start", false, "start the two runs, then serve")
	doomed := flag.Bool("doomed", false, "start the run of the endless step, then serve")
	sleep := flag.Duration("sleep", 3*time.Second, "the sleeper's sleep")
	dynamicToken := flag.String("dynamic", "", "start the dynamic run \"dynamic\" instead, waiting on this hook token (needs "+
		"WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS=1)")
	flag.Parse()
	var err error
	if jour, err = journal.Open(*path); err != nil {
		log.Fatal(err)
	}
	w, err := local.Open(*dir)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if *dynamicToken != "" {
		_, err := dynamic.Start[[]string](ctx, workflow.NewClient(w), dynamicSource, dynamic.Steps{"work": work}, *dynamicToken, dynamic.WithRunID("dynamic"))
		if err != nil {
			log.Fatal(err)
		}
	}
	if *start {
		c := workflow.NewClient(w)
		if _, err := workflow.Start(ctx, c, Sleeper, *sleep, workflow.WithRunID("sleeper")); err != nil {
			log.Fatal(err)
		}
		if _, err := workflow.Start(ctx, c, Stepper, 20, workflow.WithRunID("stepper")); err != nil {
			log.Fatal(err)
		}
	}
	if *doomed {
		if _, err := workflow.Start(ctx, workflow.NewClient(w), Doomed, "", workflow.WithRunID("doomed")); err != nil {
			log.Fatal(err)
		}
	}
	jour.Note("serving pid %d", os.Getpid())
	if err := workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx); err != nil {
		log.Fatal(err)
	}
}
