package workflow

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// ErrStreamClosed is returned by a write to a run's stream after a step
// closed it or the run ended. It is the World's error.
var ErrStreamClosed = world.ErrStreamClosed

// StreamWriter writes values of type T to one of the run's streams, which
// readers follow live with Run.Readable. Make one with Writer, in a step.
type StreamWriter[T any] struct {
	cw *chunkWriter
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
	streams := stepStreamsFrom(ctx)
	if !ok || streams == nil {
		return nil, fmt.Errorf("Writer: %w", ErrNotInStep)
	}
	cw, err := streams.open(ctx, info, namespace)
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
	return w.cw.write(raw)
}

// Flush waits until everything written so far is stored.
func (w *StreamWriter[T]) Flush() error { return w.cw.flush() }

// Close flushes, then ends the stream: readers stop once they have read
// it all, and later writes, by any step, fail.
func (w *StreamWriter[T]) Close() error { return w.cw.close() }

// stepStreams holds the stream writers one step attempt opened: one per
// stream, shared by every Writer call for it, so the step's writes to a
// stream keep their order. They are flushed when the step returns.
type stepStreams struct {
	mu      sync.Mutex
	writers map[string]*chunkWriter
}

type stepStreamsKey struct{}

func withStepStreams(ctx context.Context) (context.Context, *stepStreams) {
	s := &stepStreams{writers: map[string]*chunkWriter{}}
	return context.WithValue(ctx, stepStreamsKey{}, s), s
}

func stepStreamsFrom(ctx context.Context) *stepStreams {
	s, _ := ctx.Value(stepStreamsKey{}).(*stepStreams)
	return s
}

func (s *stepStreams) open(ctx context.Context, info engine.StepInfo, namespace string) (*chunkWriter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := engine.RunStream(info.RunID, namespace)
	if cw, ok := s.writers[name]; ok {
		return cw, nil
	}
	err := engine.OpenRunStream(ctx, info.World, info.RunID, namespace)
	if errors.Is(err, world.ErrStreamClosed) {
		return nil, fmt.Errorf("stream %q of run %s: the run has ended: %w", namespace, info.RunID, err)
	}
	if err != nil {
		return nil, err
	}
	cw := newChunkWriter(ctx, info.World, name)
	cw.seal = info.Codec
	s.writers[name] = cw
	return cw, nil
}

// settle waits for every writer of the step, whatever their writes
// returned: the step's error, if any, is what its caller hears.
func (s *stepStreams) settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cw := range s.writers {
		_ = cw.settle()
	}
}

// flush waits for every writer of the step, and fails if a write failed
// without the step code being told.
func (s *stepStreams) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, cw := range s.writers {
		errs = append(errs, cw.unreported())
	}
	return errors.Join(errs...)
}
