package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Chunk is one chunk of a run's stream and its 0-based index.
type Chunk struct {
	Index int64
	Data  json.RawMessage
}

// Follow iterates over run runID's stream in namespace from chunk start
// (negative: counted from the end of what is there now), decoded with
// chain: first what is there, then new chunks as steps write them, until
// the stream is closed or the run has ended and everything is read.
func Follow(ctx context.Context, w world.World, chain *codec.Chain, runID, namespace string, start int64) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		f := follower{w: w, chain: chain, runID: runID}
		cur := &cursor{streams: w, name: engine.RunStream(runID, namespace), next: start, idle: f.waitWrites,
			pace: world.NewPace(2), push: true} // each round reads the stream and the run
		cur.decode = f.decode(cur.name)
		defer cur.close()
		if start < 0 {
			if err := cur.seekFromEnd(ctx, -start); err != nil {
				yield(Chunk{}, err)
				return
			}
		}
		for {
			data, i, err := cur.read(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(Chunk{Index: i, Data: data}, err) || err != nil {
				return
			}
		}
	}
}

// follower is what a reader of a run's stream knows of the run.
type follower struct {
	w     world.World
	chain *codec.Chain
	runID string
}

// decode decodes the chunks of the run's stream name with the run's
// codec, which it opens at the first chunk that needs it: a reader
// without codecs reads a plain run's chunks with no request more.
func (f follower) decode(name string) func(ctx context.Context, chunk []byte) ([]byte, error) {
	var rc *codec.Run
	opened := false
	return func(ctx context.Context, chunk []byte) ([]byte, error) {
		if !opened {
			if f.chain == nil && !codec.IsEncoded(chunk) {
				return chunk, nil
			}
			run, err := f.w.GetRun(ctx, f.runID)
			if err != nil {
				return nil, err
			}
			if rc, err = engine.OpenRun(ctx, f.chain, run); err != nil {
				return nil, err
			}
			opened = true
		}
		if rc == nil {
			return chunk, nil
		}
		return rc.Decode(engine.StreamPlace(name), chunk)
	}
}

// waitWrites waits until the run's stream may have more to read. Once the
// run has ended nothing more will come, even into a stream nobody closed
// (a namespace no step opened), so it also watches the run's log.
func (f follower) waitWrites(ctx context.Context, cur *cursor) (finished bool, err error) {
	run, err := f.w.GetRun(ctx, f.runID)
	if err != nil {
		return false, err
	}
	if run.Status.Terminal() {
		return true, nil
	}
	if !world.Notifies(f.w) {
		return false, cur.pause(ctx)
	}
	// Copied: the wait that loses the race still runs while the cursor moves on.
	name, next := cur.name, cur.next
	return false, firstOf(ctx,
		func(ctx context.Context) error { return world.WaitStream(ctx, f.w, name, next) },
		func(ctx context.Context) error { return world.WaitEvents(ctx, f.w, f.runID, run.LastSlot) },
	)
}

// firstOf runs the waits together and returns when the first returns.
func firstOf(ctx context.Context, waits ...func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, len(waits))
	for _, wait := range waits {
		go func() { done <- wait(ctx) }()
	}
	return <-done
}

// StepWriters holds the stream writers one step attempt opened: one per
// stream, shared by every writer the step makes for it, so the step's
// writes to a stream keep their order. They are flushed when the step
// returns.
type StepWriters struct {
	mu      sync.Mutex
	writers map[string]*ChunkWriter
}

// NewStepWriters returns the writers of a step attempt, none open yet.
func NewStepWriters() *StepWriters {
	return &StepWriters{writers: map[string]*ChunkWriter{}}
}

// Open returns the writer to the stream in namespace of the step's run,
// opening the stream at the step's first write to it.
func (s *StepWriters) Open(ctx context.Context, info engine.StepInfo, namespace string) (*ChunkWriter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := engine.RunStream(info.RunID, namespace)
	if cw, ok := s.writers[name]; ok {
		return cw, nil
	}
	err := engine.OpenRunStream(ctx, info.World, info.RunID, namespace)
	if errors.Is(err, world.ErrStreamClosed) {
		return nil, fmt.Errorf("workflow: stream %q of run %s: the run has ended: %w", namespace, info.RunID, err)
	}
	if err != nil {
		return nil, err
	}
	cw := newChunkWriter(ctx, info.World, name, info.Codec)
	s.writers[name] = cw
	return cw, nil
}

// Settle waits for every writer of the step, whatever their writes
// returned: the step's error, if any, is what its caller hears.
func (s *StepWriters) Settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cw := range s.writers {
		_ = cw.Settle()
	}
}

// Flush waits for every writer of the step, and fails if a write failed
// without the step code being told.
func (s *StepWriters) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, cw := range s.writers {
		errs = append(errs, cw.Unreported())
	}
	return errors.Join(errs...)
}
