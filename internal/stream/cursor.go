package stream

import (
	"context"
	"fmt"
	"io"

	"github.com/lambdaworkflow/workflow/world"
)

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
			return nil, 0, fmt.Errorf("workflow: stream %s, chunk %d: %w", c.name, c.next, err)
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
