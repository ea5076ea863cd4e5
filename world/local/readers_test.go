package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// withReaders sets the reader pool's size.
func withReaders(n int) Option { return func(cfg *config) { cfg.readers = n } }

// awaitingResume waits on a hook of the given token and returns what it
// receives.
var awaitingResume = workflow.Define("local.awaiting-resume", func(ctx workflow.Context, token string) (string, error) {
	return workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
})

// crowdRuns is how many runs TestOneReaderConnection holds suspended at
// once: more than the worker's slots, so that runs are let go and taken
// up again while others are read.
const crowdRuns = 200

// crowdBound is how long the crowd may take before it counts as hung. It
// measures no speed (the crowd takes a second or two, under -race too).
const crowdBound = 60 * time.Second

// TestOneReaderConnection drives a worker's crowd of runs on a reader
// pool of one connection: each run suspends on a hook, all are resumed at
// once, their results read and their list paged through concurrently. A
// read that waits for a second reader connection while it holds one (or
// anything holding a reader for good) hangs that pool for ever, where a
// bigger pool hangs only under enough concurrent load.
func TestOneReaderConnection(t *testing.T) {
	w, err := Open(t.TempDir(), withReaders(1))
	check(t, "Open", err)
	ctx, cancel := context.WithCancel(t.Context())
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Concurrency: 64, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	served := make(chan struct{})
	go func() { defer close(served); _ = worker.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-served
		check(t, "Close", w.Close())
	})

	finished := make(chan error, 1)
	go func() { finished <- driveCrowd(ctx, workflow.NewClient(w)) }()
	select {
	case err := <-finished:
		check(t, "the crowd", err)
	case <-time.After(crowdBound):
		waiting := readersAwaited()
		// Closing the World fails the reads waiting for a connection,
		// which ignore their callers' contexts (readContext).
		w.Close()
		<-finished
		t.Fatalf("the crowd did not finish in %v: %d goroutines wait for the pool's only reader connection, "+
			"which a read or a watch holds while it waits for another; the first:\n%s", crowdBound, len(waiting), first(waiting))
	}
}

// driveCrowd starts crowdRuns runs, waits until each holds its hook,
// resumes them all at once and reads their results while it pages
// through the runs listed.
func driveCrowd(ctx context.Context, c *workflow.Client) error {
	runs := make([]*workflow.Run[string], crowdRuns)
	for i := range runs {
		var err error
		if runs[i], err = workflow.Start(ctx, c, awaitingResume, crowdToken(i)); err != nil {
			return err
		}
	}
	errs := make([]error, len(runs)+1)
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() { errs[i] = resumeAndRead(ctx, c, run, crowdToken(i)) })
	}
	wg.Go(func() { errs[len(runs)] = listAll(ctx, c) })
	wg.Wait()
	return errors.Join(errs...)
}

func crowdToken(i int) string { return fmt.Sprint("crowd-", i) }

// resumeAndRead resumes run's hook once the run holds it and checks the
// run's result.
func resumeAndRead(ctx context.Context, c *workflow.Client, run *workflow.Run[string], token string) error {
	for {
		_, err := c.GetHook(ctx, token)
		if err == nil {
			break
		}
		if !errors.Is(err, workflow.ErrHookNotFound) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	if err := workflow.ResumeHook(ctx, c, token, "resumed "+token); err != nil {
		return err
	}
	got, err := run.Result(ctx)
	if err == nil && got != "resumed "+token {
		err = fmt.Errorf("run %s returned %q", run.ID, got)
	}
	return err
}

// listAll pages through the crowd's runs, a few to a page, so that every
// page but the last leaves a row unread.
func listAll(ctx context.Context, c *workflow.Client) error {
	listed := 0
	filter := workflow.RunFilter{Workflow: awaitingResume.Name(), Limit: 7}
	for {
		page, err := c.ListRuns(ctx, filter)
		if err != nil {
			return err
		}
		listed += len(page.Runs)
		if page.NextCursor == "" {
			break
		}
		filter.Cursor = page.NextCursor
	}
	if listed != crowdRuns {
		return fmt.Errorf("listed %d runs, want %d", listed, crowdRuns)
	}
	return nil
}

// readersAwaited returns the stacks of the goroutines that wait for a
// connection of a database/sql pool.
func readersAwaited() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var waiting []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "database/sql.(*DB).conn(") {
			waiting = append(waiting, g)
		}
	}
	return waiting
}

func first(stacks []string) string {
	if len(stacks) == 0 {
		return "(none: the crowd is slow, not stuck)"
	}
	return stacks[0]
}

// TestWatchSeesOnlyOtherCommits: the watch for other processes' commits
// reads the writer's data_version, which this World's own commits leave
// as it is and another connection's commit changes.
func TestWatchSeesOnlyOtherCommits(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir)
	check(t, "Open", err)
	defer w.Close()
	before, err := w.dataVersion()
	check(t, "data_version", err)
	check(t, "WriteStream", w.WriteStream(t.Context(), "own", [][]byte{[]byte("chunk")}))
	if v, err := w.dataVersion(); err != nil || v != before {
		t.Fatalf("after the World's own commit data_version is %d, %v; want %d", v, err, before)
	}
	other, err := Open(dir) // stands for another process
	check(t, "Open another", err)
	defer other.Close()
	check(t, "WriteStream by another", other.WriteStream(t.Context(), "other", [][]byte{[]byte("chunk")}))
	if v, err := w.dataVersion(); err != nil || v == before {
		t.Fatalf("after another World's commit data_version is %d, %v; want a change", v, err)
	}
}
