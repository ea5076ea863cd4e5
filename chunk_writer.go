package workflow

import (
	"context"
	"fmt"
	"sync"

	payloadcodec "github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// maxPendingChunks bounds the chunks a writer holds while the World is
// slower than the code producing them; past it, write waits for room.
const maxPendingChunks = 256

// chunkWriter appends chunks to one stream, in order, without making the
// producer wait for each write: chunks queue up while a write is in flight
// and go out together in the next one. A failed write fails every later
// call; flush waits until everything queued is written.
type chunkWriter struct {
	ctx     context.Context
	streams world.Streams
	name    string
	seal    *payloadcodec.Run // encodes each chunk; nil for a plain run

	mu       sync.Mutex
	changed  *sync.Cond // signalled when pending drains or a write ends
	pending  [][]byte
	busy     bool  // a drain goroutine is writing
	err      error // the first failed write
	reported bool  // err was returned to the writer's user
	closed   bool
}

func newChunkWriter(ctx context.Context, streams world.Streams, name string) *chunkWriter {
	cw := &chunkWriter{ctx: ctx, streams: streams, name: name}
	cw.changed = sync.NewCond(&cw.mu)
	return cw
}

func (cw *chunkWriter) write(chunk []byte) error {
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
		return fmt.Errorf("write stream %s: %w", cw.name, world.ErrStreamClosed)
	}
	cw.pending = append(cw.pending, chunk)
	if !cw.busy {
		cw.busy = true
		go cw.drain()
	}
	return nil
}

// drain writes what is pending, batch after batch, until nothing is left.
func (cw *chunkWriter) drain() {
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

// flush waits until every chunk written so far is in the World.
func (cw *chunkWriter) flush() error {
	err := cw.settle()
	if err != nil {
		cw.mu.Lock()
		cw.reported = true
		cw.mu.Unlock()
	}
	return err
}

// unreported flushes like flush, but returns only a failure its user has
// not been told about, when the step that wrote ends.
func (cw *chunkWriter) unreported() error {
	err := cw.settle()
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.reported {
		return nil
	}
	return err
}

func (cw *chunkWriter) settle() error {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for cw.busy {
		cw.changed.Wait()
	}
	return cw.err
}

// close flushes, then closes the stream for every writer.
func (cw *chunkWriter) close() error {
	if err := cw.flush(); err != nil {
		return err
	}
	cw.mu.Lock()
	cw.closed = true
	cw.mu.Unlock()
	return cw.streams.CloseStream(cw.ctx, cw.name)
}
