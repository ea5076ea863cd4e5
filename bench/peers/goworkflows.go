package peers

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/cschleiden/go-workflows/backend"
	"github.com/cschleiden/go-workflows/backend/sqlite"
	"github.com/cschleiden/go-workflows/client"
	"github.com/cschleiden/go-workflows/worker"
	"github.com/cschleiden/go-workflows/workflow"

	"github.com/lambdaworkflow/workflow/bench"
)

// goWorkflowsPoll is how often go-workflows' idle pollers ask SQLite for
// a task. Its default, 200 ms, would put a poll wait into every metric;
// the SQLite backend cannot notify, so the bench polls every millisecond.
const goWorkflowsPoll = time.Millisecond

// GoWorkflows is go-workflows on its SQLite backend, with a worker in this
// process.
func GoWorkflows() bench.Subject {
	return bench.Subject{
		Name: "go-workflows", Peer: true,
		Description: fmt.Sprintf("go-workflows v1.2.0 on its SQLite backend, in process (pollers every %v)", goWorkflowsPoll),
		Open:        openGoWorkflows,
	}
}

type gwEngine struct {
	c *client.Client
}

func openGoWorkflows(context.Context) (bench.Engine, func(), error) {
	dir, err := os.MkdirTemp("", "go-workflows-bench-")
	if err != nil {
		return nil, nil, err
	}
	b := sqlite.NewSqliteBackend(filepath.Join(dir, "gw.db"), sqlite.WithBackendOptions(backend.WithLogger(quietLogger())))
	opts := worker.DefaultOptions
	opts.WorkflowPollingInterval, opts.ActivityPollingInterval = goWorkflowsPoll, goWorkflowsPoll
	opts.MaxParallelActivityTasks = 64
	w := worker.New(b, &opts)
	for _, wf := range []any{gwSequential, gwFanOut, gwResumable} {
		if err := w.RegisterWorkflow(wf); err != nil {
			return nil, nil, err
		}
	}
	if err := w.RegisterActivity(gwStep); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Start(ctx); err != nil {
		cancel()
		return nil, nil, err
	}
	release := func() {
		cancel()
		w.WaitForCompletion()
		b.Close()
		os.RemoveAll(dir)
	}
	return &gwEngine{c: client.New(b)}, release, nil
}

// gwStep is the benchmark step as an activity. Activities cannot see their
// workflow instance, so the workflow passes its ID.
func gwStep(_ context.Context, runID string, in bench.Payload) (bench.Payload, error) {
	return bench.RunStep(runID, in), nil
}

func gwCall(ctx workflow.Context, in bench.Payload) workflow.Future[bench.Payload] {
	return workflow.ExecuteActivity[bench.Payload](ctx, workflow.DefaultActivityOptions, gwStep, workflow.WorkflowInstance(ctx).InstanceID, in)
}

func gwSequential(ctx workflow.Context, in seqInput) (int, error) {
	sum := 0
	for i := 1; i <= in.Steps; i++ {
		out, err := gwCall(ctx, bench.NewPayload(i, in.Work)).Get(ctx)
		if err != nil {
			return 0, err
		}
		sum += out.Index
	}
	return sum, nil
}

func gwFanOut(ctx workflow.Context, in seqInput) (int, error) {
	futures := make([]workflow.Future[bench.Payload], in.Steps)
	for i := range futures {
		futures[i] = gwCall(ctx, bench.NewPayload(i+1, in.Work))
	}
	for _, f := range futures {
		if _, err := f.Get(ctx); err != nil {
			return 0, err
		}
	}
	if !workflow.Replaying(ctx) {
		bench.MarkJoin(workflow.WorkflowInstance(ctx).InstanceID)
	}
	return len(futures), nil
}

// gwResumable waits on a signal channel before each step.
func gwResumable(ctx workflow.Context, in seqInput) (int, error) {
	id := workflow.WorkflowInstance(ctx).InstanceID
	for i := 1; i <= in.Steps; i++ {
		if !workflow.Replaying(ctx) {
			bench.MarkAwaiting(id, i)
		}
		workflow.NewSignalChannel[bench.Payload](ctx, resumeTopic(i)).Receive(ctx)
		if _, err := gwCall(ctx, bench.NewPayload(i, in.Work)).Get(ctx); err != nil {
			return 0, err
		}
	}
	return in.Steps, nil
}

func gwStart(ctx context.Context, e *gwEngine, wf any, id string, in seqInput) (bench.Wait, error) {
	inst, err := e.c.CreateWorkflowInstance(ctx, client.WorkflowInstanceOptions{InstanceID: id}, wf, in)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		_, err := client.GetWorkflowResult[int](ctx, e.c, inst, timeout(ctx))
		return err
	}, nil
}

func (e *gwEngine) Sequential(ctx context.Context, id string, steps int, work time.Duration) (bench.Wait, error) {
	return gwStart(ctx, e, gwSequential, id, seqInput{Steps: steps, Work: work})
}

func (e *gwEngine) FanOut(ctx context.Context, id string, branches int, work time.Duration) (bench.Wait, error) {
	return gwStart(ctx, e, gwFanOut, id, seqInput{Steps: branches, Work: work})
}

func (e *gwEngine) Resumable(ctx context.Context, id string, resumes int, work time.Duration) (bench.Wait, error) {
	return gwStart(ctx, e, gwResumable, id, seqInput{Steps: resumes, Work: work})
}

func (e *gwEngine) AwaitSuspended(ctx context.Context, id string, i int) error {
	return bench.AwaitMarked(ctx, id, i)
}

func (e *gwEngine) Resume(ctx context.Context, id string, i int) error {
	return e.c.SignalWorkflow(ctx, id, resumeTopic(i), bench.NewPayload(i, 0))
}

// Stream: go-workflows has no stream a client reads while a workflow
// writes it (signals go to a workflow, not out of it).
func (e *gwEngine) Stream(context.Context, string, bench.StreamInput) (iter.Seq2[bench.Chunk, error], bench.Wait, error) {
	return nil, nil, bench.ErrNoStream
}

func (e *gwEngine) StreamAPI() string { return "none: go-workflows has no client-readable stream" }
