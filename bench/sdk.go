package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// sdkEngine is this SDK on one World: a Worker with 64 slots and a Client in
// the benchmark process.
type sdkEngine struct {
	w      world.World
	c      *workflow.Client
	worker *workflow.Worker
}

// openSDK runs a Worker on the World open returns, until the release.
func openSDK(open func(ctx context.Context) (world.World, func(), error)) func(ctx context.Context) (Engine, func(), error) {
	return func(ctx context.Context) (Engine, func(), error) {
		w, release, err := open(ctx)
		if err != nil {
			return nil, nil, err
		}
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		e := &sdkEngine{w: w, c: workflow.NewClient(w), worker: workflow.NewWorker(w, workflow.WorkerOptions{Concurrency: 64, Logger: quiet})}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); e.worker.Run(ctx) }()
		return e, func() { cancel(); <-done; release() }, nil
	}
}

// start starts a run of wf under id and returns the wait for its result.
func start[I, O any](ctx context.Context, e *sdkEngine, wf *workflow.Workflow[I, O], id string, in I) (*workflow.Run[O], Wait, error) {
	run, err := workflow.Start(ctx, e.c, wf, in, workflow.WithRunID(id))
	if err != nil {
		return nil, nil, err
	}
	return run, func(ctx context.Context) error { _, err := run.Result(ctx); return err }, nil
}

func (e *sdkEngine) Sequential(ctx context.Context, id string, steps int, work time.Duration) (Wait, error) {
	_, wait, err := start(ctx, e, sequential, id, SeqInput{Steps: steps, Work: work})
	return wait, err
}

func (e *sdkEngine) FanOut(ctx context.Context, id string, branches int, work time.Duration) (Wait, error) {
	_, wait, err := start(ctx, e, fanout, id, FanInput{Branches: branches, Work: work})
	return wait, err
}

func (e *sdkEngine) Resumable(ctx context.Context, id string, resumes int, work time.Duration) (Wait, error) {
	_, wait, err := start(ctx, e, resume, id, ResumeInput{Resumes: resumes, Work: work})
	return wait, err
}

// AwaitSuspended waits until the run's i-th hook is registered.
func (e *sdkEngine) AwaitSuspended(ctx context.Context, id string, i int) error {
	return awaitHook(ctx, e.w, hookToken(id, i))
}

// awaitHook returns once token is held.
func awaitHook(ctx context.Context, w world.World, token string) error {
	for {
		if _, err := w.GetHook(ctx, token); err == nil {
			return nil
		} else if !errors.Is(err, world.ErrHookNotFound) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("hook %s never appeared: %w", token, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

func (e *sdkEngine) Resume(ctx context.Context, id string, i int) error {
	return workflow.ResumeHook(ctx, e.c, hookToken(id, i), NewPayload(i, 0))
}

// Stream reads the run's namespaced stream with Run.Readable, as a client
// elsewhere would.
func (e *sdkEngine) Stream(ctx context.Context, id string, in StreamInput) (iter.Seq2[Chunk, error], Wait, error) {
	run, wait, err := start(ctx, e, agentRun, id, in)
	if err != nil {
		return nil, nil, err
	}
	chunks := func(yield func(Chunk, error) bool) {
		for c, err := range run.Readable(ctx, in.Namespace, 0) {
			var ch Chunk
			if err == nil {
				err = c.Decode(&ch)
			}
			if !yield(ch, err) || err != nil {
				return
			}
		}
	}
	return chunks, wait, nil
}

func (e *sdkEngine) StreamAPI() string {
	return "workflow.Writer (step side, one Write per chunk) and Run.Readable (reader in the benchmark process)"
}

// Busy is how many runs the Worker holds in flight.
func (e *sdkEngine) Busy() int { return e.worker.Busy() }
