package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	payloadcodec "github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// StreamChunk is one value read from a run's stream.
type StreamChunk struct {
	// Index is the chunk's 0-based position: read again from Index+1 to
	// pick up where a reader left off.
	Index int64
	Data  json.RawMessage
}

// Decode decodes the chunk into v, which points to the type the stream's
// writer wrote.
func (c StreamChunk) Decode(v any) error { return json.Unmarshal(c.Data, v) }

// Readable iterates over the run's stream in namespace ("" is the default
// stream) from chunk startIndex: first what is there, then new chunks as
// steps write them, until the stream is closed or the run has ended and
// everything is read. A negative startIndex counts from the end of what
// is there now (-1: the last chunk).
//
//	for chunk, err := range run.Readable(ctx, "tokens", 0) {
//		if err != nil { return err }
//		var tok string
//		_ = chunk.Decode(&tok)
//	}
func (r *Run[O]) Readable(ctx context.Context, namespace string, startIndex int64) iter.Seq2[StreamChunk, error] {
	return func(yield func(StreamChunk, error) bool) {
		cur := &cursor{streams: r.c.world, name: engine.RunStream(r.ID, namespace), next: startIndex, idle: r.waitWrites,
			pace: world.NewPace(2), push: true} // each round reads the stream and the run
		cur.decode = r.chunkDecoder(cur.name)
		defer cur.close()
		if startIndex < 0 {
			if err := cur.seekFromEnd(ctx, -startIndex); err != nil {
				yield(StreamChunk{}, err)
				return
			}
		}
		for {
			data, i, err := cur.read(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(StreamChunk{Index: i, Data: data}, err) || err != nil {
				return
			}
		}
	}
}

// ReadStream iterates over the values of type T in the run's stream in
// namespace, as [Run.Readable] does over raw chunks: from chunk
// startIndex, tailing new values until the stream is closed or the run
// has ended. T is the type the stream's [Writer] wrote:
//
//	for tok, err := range workflow.ReadStream[string](ctx, run, "tokens", 0) {
//		if err != nil { return err }
//		fmt.Print(tok)
//	}
//
// A chunk that does not decode into a T is yielded as an error and the
// loop goes on if the body continues; any other error ends it. Use
// Readable when the reader must know each chunk's index.
func ReadStream[T, O any](ctx context.Context, run *Run[O], namespace string, startIndex int64) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for chunk, err := range run.Readable(ctx, namespace, startIndex) {
			var v T
			if err == nil {
				if derr := chunk.Decode(&v); derr != nil {
					err = fmt.Errorf("stream %q of run %s, chunk %d: decoding into %T: %w", namespace, run.ID, chunk.Index, v, derr)
				}
			}
			if !yield(v, err) {
				return
			}
		}
	}
}

// chunkDecoder decodes the chunks of the run's stream name with the run's
// codec, which it opens at the first chunk that needs it: a reader
// without codecs reads a plain run's chunks with no request more.
func (r *Run[O]) chunkDecoder(name string) func(ctx context.Context, chunk []byte) ([]byte, error) {
	var rc *payloadcodec.Run
	opened := false
	return func(ctx context.Context, chunk []byte) ([]byte, error) {
		if !opened {
			if r.c.codec == nil && !payloadcodec.IsEncoded(chunk) {
				return chunk, nil
			}
			run, err := r.c.world.GetRun(ctx, r.ID)
			if err != nil {
				return nil, err
			}
			if rc, err = engine.OpenRun(ctx, r.c.codec, run); err != nil {
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
func (r *Run[O]) waitWrites(ctx context.Context, cur *cursor) (finished bool, err error) {
	run, err := r.c.world.GetRun(ctx, r.ID)
	if err != nil {
		return false, err
	}
	if run.Status.Terminal() {
		return true, nil
	}
	if !world.Notifies(r.c.world) {
		return false, cur.pause(ctx)
	}
	// Copied: the wait that loses the race still runs while the cursor moves on.
	name, next := cur.name, cur.next
	return false, firstOf(ctx,
		func(ctx context.Context) error { return world.WaitStream(ctx, r.c.world, name, next) },
		func(ctx context.Context) error { return world.WaitEvents(ctx, r.c.world, r.ID, run.LastSlot) },
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

// cursor reads one stream chunk by chunk from an index, a page at a time,
// waiting for chunks that are not written yet. Every read after the first
// waits its turn: on a World that cannot notify, the pace bounds the
// reader's requests however fast the stream is written.
type cursor struct {
	streams world.Streams
	name    string
	next    int64 // index of the next chunk read returns
	page    [][]byte
	closed  bool
	started bool // a page has been read
	pace    world.Pace
	// push asks for a subscription to the stream's writes, on a World that
	// pushes them (world.StreamSubscriber), before the first read; the
	// cursor's owner then calls close. sub is that subscription, and the
	// pace the fallback for pushes lost.
	push bool
	sub  world.StreamSubscription
	// idle, if set, waits when the reader has caught up with an open
	// stream, and reports whether the stream is finished although nobody
	// closed it. Unset, the cursor waits for the stream itself.
	idle func(ctx context.Context, cur *cursor) (finished bool, err error)
	// decode, if set, decodes each chunk (a run's payload codec).
	decode func(ctx context.Context, chunk []byte) ([]byte, error)
}

// read returns the next chunk and its index; io.EOF after the last one of
// a closed stream.
func (c *cursor) read(ctx context.Context) ([]byte, int64, error) {
	for len(c.page) == 0 {
		if c.closed {
			return nil, 0, io.EOF
		}
		if c.started {
			finished, err := c.wait(ctx)
			if err != nil {
				return nil, 0, err
			}
			c.closed = finished // read once more, then stop
		}
		if !c.started {
			c.subscribe(ctx)
		}
		c.started = true
		chunks, closed, err := c.streams.ReadStream(ctx, c.name, c.next)
		if err != nil {
			return nil, 0, err
		}
		c.page, c.closed = chunks, c.closed || closed
		if len(chunks) > 0 {
			c.pace.Progress()
		}
	}
	chunk := c.page[0]
	if c.decode != nil {
		plain, err := c.decode(ctx, chunk)
		if err != nil {
			return nil, 0, fmt.Errorf("stream %s, chunk %d: %w", c.name, c.next, err)
		}
		chunk = plain
	}
	c.page = c.page[1:]
	c.next++
	return chunk, c.next - 1, nil
}

func (c *cursor) wait(ctx context.Context) (bool, error) {
	if c.idle != nil {
		return c.idle(ctx, c)
	}
	if c.sub != nil {
		return false, c.pause(ctx)
	}
	return false, c.pace.WaitStream(ctx, c.streams, c.name, c.next)
}

// subscribe subscribes to the stream's writes if the World pushes them.
func (c *cursor) subscribe(ctx context.Context) {
	if s, ok := c.streams.(world.StreamSubscriber); ok && c.push && c.sub == nil && !world.Notifies(c.streams) {
		c.sub = s.SubscribeStream(ctx, c.name)
	}
}

// pause waits for the pace's next poll, or less if a write is pushed.
func (c *cursor) pause(ctx context.Context) error {
	if c.sub == nil {
		return c.pace.Pause(ctx)
	}
	return c.pace.PauseOrWake(ctx, c.sub.Moved(c.next))
}

// close ends the cursor's subscription, if it has one.
func (c *cursor) close() {
	if c.sub != nil {
		c.sub.Close()
		c.sub = nil
	}
}

// seekFromEnd moves the cursor to n chunks before the end of what the
// stream holds now.
func (c *cursor) seekFromEnd(ctx context.Context, n int64) error {
	c.subscribe(ctx)
	chunks, closed, err := c.streams.ReadStream(ctx, c.name, 0)
	if err != nil {
		return err
	}
	from := max(int64(len(chunks))-n, 0)
	c.page, c.next, c.closed, c.started = chunks[from:], from, closed, true
	return nil
}
