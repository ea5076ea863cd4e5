package workflow

import (
	"context"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/stream"
	"github.com/lambdaworkflow/workflow/world"
)

// ErrStreamClosed is returned by a write to a run's stream after a step
// closed it or the run ended. It is the World's error.
var ErrStreamClosed = world.ErrStreamClosed

// StreamWriter writes values of type T to one of the run's streams, which
// readers follow live with Run.Readable. Make one with Writer, in a step.
type StreamWriter[T any] struct {
	cw *stream.ChunkWriter
}

// Writer returns a writer to the calling run's stream in namespace ("" is
// the default stream). It works only in a step: pass the step's context.
//
// Writes are queued and sent in order without waiting for each to land;
// everything a step wrote is in the stream before the step's result is
// recorded, so chunks keep their order across the steps that write them,
// one after another. The stream stays open for later steps until one of
// them calls Close, or the run ends.
func Writer[T any](ctx context.Context, namespace string) (*StreamWriter[T], error) {
	info, ok := engine.StepInfoFrom(ctx)
	writers, _ := ctx.Value(stepWritersKey{}).(*stream.StepWriters)
	if !ok || writers == nil {
		return nil, fmt.Errorf("Writer: %w", ErrNotInStep)
	}
	cw, err := writers.Open(ctx, info, namespace)
	if err != nil {
		return nil, err
	}
	return &StreamWriter[T]{cw: cw}, nil
}

// Write appends v to the stream. It returns before v is stored, unless
// the World is far behind; an earlier write that failed fails it.
func (w *StreamWriter[T]) Write(v T) error {
	raw, err := marshal("stream value", v)
	if err != nil {
		return err
	}
	return w.cw.Write(raw)
}

// Flush waits until everything written so far is stored.
func (w *StreamWriter[T]) Flush() error { return w.cw.Flush() }

// Close flushes, then ends the stream: readers stop once they have read
// it all, and later writes, by any step, fail.
func (w *StreamWriter[T]) Close() error { return w.cw.Close() }

// stepWritersKey holds, in a step's context, the stream writers of the
// step attempt (wrapStep).
type stepWritersKey struct{}
