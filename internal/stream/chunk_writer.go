// Package stream is what the root package writes to a World's streams and
// reads back: a run's streams, written in batches by its steps and
// followed by cursors, and the reply streams of responding hooks and
// webhooks, made of frames. None of it is user API: package workflow
// wraps it in StreamWriter, Run.Readable, Stream and the resume calls.
package stream

import (
	"context"
	"fmt"
	"sync"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// maxPendingChunks bounds the chunks a writer holds while the World is
// slower than the code producing them; past it, write waits for room.
const maxPendingChunks = 256

// ChunkWriter appends chunks to one stream, in order, without making the
// producer wait for each write: chunks queue up while a write is in flight
// and go out together in the next one. A failed write fails every later
// call; flush waits until everything queued is written.
type ChunkWriter struct {
	ctx     context.Context
	streams world.Streams
	name    string
	seal    *codec.Run // encodes each chunk; nil for a plain run

	mu       sync.Mutex
	changed  *sync.Cond // signalled when pending drains or a write ends
	pending  [][]byte
	busy     bool  // a drain goroutine is writing
	err      error // the first failed write
	reported bool  // err was returned to the writer's user
	closed   bool
}

// newChunkWriter returns a writer to the stream name that seals each
// chunk with seal, the run's codec (nil for a plain run).
func newChunkWriter(ctx context.Context, streams world.Streams, name string, seal *codec.Run) *ChunkWriter {
	cw := &ChunkWriter{ctx: ctx, streams: streams, name: name, seal: seal}
	cw.changed = sync.NewCond(&cw.mu)
	return cw
}

// Write queues chunk; it waits only while maxPendingChunks are queued,
// and fails once a write failed or the writer was closed.
func (cw *ChunkWriter) Write(chunk []byte) error {
	if cw.seal != nil {
		var err error
		if chunk, err = cw.seal.Encode(engine.StreamPlace(cw.name), chunk); err != nil {
			return err
		}
	}
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for cw.err == nil && len(cw.pending) >= maxPendingChunks {
		cw.changed.Wait()
	}
	switch {
	case cw.err != nil:
		cw.reported = true
		return cw.err
	case cw.closed:
		return fmt.Errorf("workflow: write stream %s: %w", cw.name, world.ErrStreamClosed)
	}
	cw.pending = append(cw.pending, chunk)
	if !cw.busy {
		cw.busy = true
		go cw.drain()
	}
	return nil
}

// drain writes what is pending, batch after batch, until nothing is left.
func (cw *ChunkWriter) drain() {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for len(cw.pending) > 0 && cw.err == nil {
		batch := cw.pending
		cw.pending = nil
		cw.changed.Broadcast()
		cw.mu.Unlock()
		err := cw.streams.WriteStream(cw.ctx, cw.name, batch)
		cw.mu.Lock()
		cw.err = err
	}
	cw.pending, cw.busy = nil, false
	cw.changed.Broadcast()
}

// Flush waits until every chunk written so far is in the World.
func (cw *ChunkWriter) Flush() error {
	err := cw.Settle()
	if err != nil {
		cw.mu.Lock()
		cw.reported = true
		cw.mu.Unlock()
	}
	return err
}

// Unreported flushes like Flush, but returns only a failure its user has
// not been told about, when the step that wrote ends.
func (cw *ChunkWriter) Unreported() error {
	err := cw.Settle()
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.reported {
		return nil
	}
	return err
}

// Settle waits until everything queued is written, and returns the first
// failed write without counting it as reported.
func (cw *ChunkWriter) Settle() error {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for cw.busy {
		cw.changed.Wait()
	}
	return cw.err
}

// Close flushes, then closes the stream for every writer.
func (cw *ChunkWriter) Close() error {
	if err := cw.Flush(); err != nil {
		return err
	}
	cw.mu.Lock()
	cw.closed = true
	cw.mu.Unlock()
	return cw.streams.CloseStream(cw.ctx, cw.name)
}
