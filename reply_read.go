package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel/trace"

	payloadcodec "github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// replyReader reads one resume's reply stream (see replyFrame), following
// the newest attempt of the step that answers.
type replyReader struct {
	c        *Client
	resumeID string
	cur      *cursor
	by       *replier // the attempt being followed; nil before the start
	yielded  bool     // items of that attempt were handed out
	ended    bool
	opened   bool              // run is the codec of the run that replies
	run      *payloadcodec.Run // nil for a plain run
}

func newReplyReader(c *Client, resumeID string) *replyReader {
	return &replyReader{c: c, resumeID: resumeID, cur: &cursor{streams: c.world, name: engine.ReplyStream(resumeID), pace: world.NewPace(1)}}
}

// open decodes a frame's head or item with the codec of the run that
// wrote it, which it reads once, at the first part that needs it: a
// reader without codecs reads a plain run's reply with no request more.
func (r *replyReader) open(ctx context.Context, by replier, raw json.RawMessage, item bool) (json.RawMessage, error) {
	if raw == nil || (!r.opened && r.c.codec == nil && !engine.IsSealedValue(raw)) {
		return raw, nil
	}
	if !r.opened {
		run, err := r.c.world.GetRun(ctx, by.Run)
		if err != nil {
			return nil, err
		}
		if r.run, err = engine.OpenRun(ctx, r.c.codec, run); err != nil {
			return nil, err
		}
		r.opened = true
	}
	return engine.OpenValue(r.run, engine.ReplyPlace(r.resumeID, item), raw)
}

// frame returns the next frame that matters: a start by a newer attempt,
// or a frame of the attempt being followed. A stream that closes first
// means the run ended without (completing) a reply.
func (r *replyReader) frame(ctx context.Context) (replyFrame, error) {
	for {
		chunk, _, err := r.cur.read(ctx)
		if errors.Is(err, io.EOF) {
			return replyFrame{}, ErrHookResponseNotSent
		}
		if err != nil {
			return replyFrame{}, err
		}
		var f replyFrame
		if err := json.Unmarshal(chunk, &f); err != nil {
			return replyFrame{}, fmt.Errorf("reading reply stream %s: %w", r.cur.name, err)
		}
		if f.Head, err = r.open(ctx, f.By, f.Head, false); err != nil {
			return replyFrame{}, fmt.Errorf("reading reply stream %s: %w", r.cur.name, err)
		}
		if f.Item, err = r.open(ctx, f.By, f.Item, true); err != nil {
			return replyFrame{}, fmt.Errorf("reading reply stream %s: %w", r.cur.name, err)
		}
		switch {
		case f.Start && (r.by == nil || f.By.supersedes(*r.by)):
			r.by = &f.By
			return f, nil
		case r.by != nil && f.By == *r.by && !f.Start:
			return f, nil
		}
	}
}

// next implements itemSource.
func (r *replyReader) next(ctx context.Context) (json.RawMessage, error) {
	for !r.ended {
		f, err := r.frame(ctx)
		switch {
		case err != nil:
			return nil, err
		case f.Start && r.yielded:
			r.yielded = false
			return nil, ErrReplyRestarted
		case f.Start:
			r.ended = f.End
		case f.End:
			r.ended = true
		default:
			r.yielded = true
			return f.Item, nil
		}
	}
	return nil, io.EOF
}

// awaitReply waits for the reply to resume resumeID and decodes it into an
// R; a streamed reply's items are then read through R (a Stream, or a
// WebhookResponse) as they arrive.
func awaitReply[R any](ctx context.Context, c *Client, token, resumeID string, timeout time.Duration) (reply R, err error) {
	ctx, span := engine.StartSpan(ctx, "workflow.reply.await", trace.SpanKindConsumer)
	defer func() { engine.EndSpan(span, err) }()
	waitCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	rr := newReplyReader(c, resumeID)
	start, err := rr.frame(waitCtx)
	if err != nil {
		return reply, fmt.Errorf("waiting for the reply of hook %q: %w", token, err)
	}
	if start.Rejected != "" {
		return reply, fmt.Errorf("hook %q: %w: %s", token, ErrHookMessageRejected, start.Rejected)
	}
	rr.ended = start.End
	if len(start.Head) > 0 {
		if err := json.Unmarshal(start.Head, &reply); err != nil {
			return reply, fmt.Errorf("hook %q: decoding the reply into %T: %w", token, reply, err)
		}
	}
	if start.Items {
		tail, ok := any(&reply).(replyTail)
		if !ok {
			return reply, fmt.Errorf("hook %q replied with a stream, which %T cannot hold (use workflow.Stream)", token, reply)
		}
		tail.attachItems(rr)
	}
	return reply, nil
}
