package peers

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // DBOS's SQLite system database

	"github.com/lambdaworkflow/workflow/bench"
)

// DBOS is DBOS Transact Go on its SQLite system database (modernc.org/sqlite,
// DBOS's defaults: WAL, synchronous=NORMAL), launched in this process.
func DBOS() bench.Subject {
	return bench.Subject{
		Name: "dbos", Peer: true,
		Description: "DBOS Transact Go " + dbosVersion + " on SQLite (its driver/sqlite, in process)",
		Open:        openDBOS,
	}
}

const dbosVersion = "v1.8.0"

type dbosEngine struct {
	ctx dbos.Context
}

func openDBOS(ctx context.Context) (bench.Engine, func(), error) {
	dir, err := os.MkdirTemp("", "dbos-bench-")
	if err != nil {
		return nil, nil, err
	}
	dctx, err := dbos.NewContext(context.Background(), dbos.Config{
		AppName:     "bench",
		DatabaseURL: "sqlite:" + filepath.Join(dir, "dbos.db"),
		Logger:      quietLogger(),
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("dbos: %w", err)
	}
	dbos.RegisterWorkflow(dctx, dbosSequential)
	dbos.RegisterWorkflow(dctx, dbosFanOut)
	dbos.RegisterWorkflow(dctx, dbosResumable)
	dbos.RegisterWorkflow(dctx, dbosStream)
	if err := dbos.Launch(dctx); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("dbos: launch: %w", err)
	}
	release := func() {
		dbos.Shutdown(dctx, 10*time.Second)
		os.RemoveAll(dir)
	}
	return &dbosEngine{ctx: dctx}, release, nil
}

// seqInput, fanInput and resumeInput are the workflows' inputs.
type seqInput struct {
	Steps int           `json:"steps"`
	Work  time.Duration `json:"work"`
}

// dbosStep runs the benchmark step as a DBOS step of the workflow in ctx.
func dbosStep(ctx dbos.Context, id string, in bench.Payload) (bench.Payload, error) {
	return dbos.RunAsStep(ctx, func(context.Context) (bench.Payload, error) { return bench.RunStep(id, in), nil })
}

func dbosSequential(ctx dbos.Context, in seqInput) (int, error) {
	id, err := dbos.GetWorkflowID(ctx)
	if err != nil {
		return 0, err
	}
	sum := 0
	for i := 1; i <= in.Steps; i++ {
		out, err := dbosStep(ctx, id, bench.NewPayload(i, in.Work))
		if err != nil {
			return 0, err
		}
		sum += out.Index
	}
	return sum, nil
}

// dbosFanOut starts the branches with dbos.Go and joins their channels.
func dbosFanOut(ctx dbos.Context, in seqInput) (int, error) {
	id, err := dbos.GetWorkflowID(ctx)
	if err != nil {
		return 0, err
	}
	outs := make([]<-chan dbos.StepOutcome[bench.Payload], in.Steps)
	for i := range outs {
		p := bench.NewPayload(i+1, in.Work)
		if outs[i], err = dbos.Go(ctx, func(context.Context) (bench.Payload, error) { return bench.RunStep(id, p), nil }); err != nil {
			return 0, err
		}
	}
	for _, ch := range outs {
		if o := <-ch; o.Err != nil {
			return 0, o.Err
		}
	}
	bench.MarkJoin(id)
	return len(outs), nil
}

// dbosResumable waits on dbos.Recv (a message sent with dbos.Send) before
// each step.
func dbosResumable(ctx dbos.Context, in seqInput) (int, error) {
	id, err := dbos.GetWorkflowID(ctx)
	if err != nil {
		return 0, err
	}
	for i := 1; i <= in.Steps; i++ {
		bench.MarkAwaiting(id, i)
		if _, err := dbos.Recv[bench.Payload](ctx, resumeTopic(i), time.Hour); err != nil {
			return 0, err
		}
		if _, err := dbosStep(ctx, id, bench.NewPayload(i, in.Work)); err != nil {
			return 0, err
		}
	}
	return in.Steps, nil
}

func resumeTopic(i int) string { return fmt.Sprintf("resume-%d", i) }

// dbosStream writes the recording with dbos.WriteStream, which may only be
// called from workflow code (each write is a step of its own).
func dbosStream(ctx dbos.Context, in bench.StreamInput) (int, error) {
	id, err := dbos.GetWorkflowID(ctx)
	if err != nil {
		return 0, err
	}
	n, err := bench.ReplayRecording(id, in, func(c bench.Chunk) error { return dbos.WriteStream(ctx, in.Namespace, c) })
	if err != nil {
		return n, err
	}
	return n, dbos.CloseStream(ctx, in.Namespace)
}

func dbosStart[I, O any](e *dbosEngine, wf dbos.Workflow[I, O], id string, in I) (bench.Wait, error) {
	h, err := dbos.RunWorkflow(e.ctx, wf, in, dbos.WithWorkflowID(id))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		_, err := h.GetResult(dbos.WithHandleTimeout(timeout(ctx)))
		return err
	}, nil
}

func (e *dbosEngine) Sequential(_ context.Context, id string, steps int, work time.Duration) (bench.Wait, error) {
	return dbosStart(e, dbosSequential, id, seqInput{Steps: steps, Work: work})
}

func (e *dbosEngine) FanOut(_ context.Context, id string, branches int, work time.Duration) (bench.Wait, error) {
	return dbosStart(e, dbosFanOut, id, seqInput{Steps: branches, Work: work})
}

func (e *dbosEngine) Resumable(_ context.Context, id string, resumes int, work time.Duration) (bench.Wait, error) {
	return dbosStart(e, dbosResumable, id, seqInput{Steps: resumes, Work: work})
}

func (e *dbosEngine) AwaitSuspended(ctx context.Context, id string, i int) error {
	return bench.AwaitMarked(ctx, id, i)
}

func (e *dbosEngine) Resume(_ context.Context, id string, i int) error {
	return dbos.Send(e.ctx, id, bench.NewPayload(i, 0), resumeTopic(i))
}

func (e *dbosEngine) Stream(ctx context.Context, id string, in bench.StreamInput) (iter.Seq2[bench.Chunk, error], bench.Wait, error) {
	wait, err := dbosStart(e, dbosStream, id, in)
	if err != nil {
		return nil, nil, err
	}
	values, err := dbos.ReadStreamAsync[bench.Chunk](e.ctx, id, in.Namespace)
	if err != nil {
		return nil, nil, err
	}
	chunks := func(yield func(bench.Chunk, error) bool) {
		for {
			select {
			case v, ok := <-values:
				if !ok || v.Closed {
					return
				}
				if !yield(v.Value, v.Err) || v.Err != nil {
					return
				}
			case <-ctx.Done():
				yield(bench.Chunk{}, ctx.Err())
				return
			}
		}
	}
	return chunks, wait, nil
}

func (e *dbosEngine) StreamAPI() string {
	return "dbos.WriteStream (workflow side, one call per chunk) and dbos.ReadStreamAsync (reader in the benchmark process)"
}
