package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// replyReader reads one resume's reply stream (see replyFrame), following
// the newest attempt of the step that answers.
type replyReader struct {
	cur     *cursor
	by      *replier // the attempt being followed; nil before the start
	yielded bool     // items of that attempt were handed out
	ended   bool
}

func newReplyReader(w world.Streams, resumeID string) *replyReader {
	return &replyReader{cur: &cursor{streams: w, name: engine.ReplyStream(resumeID), pace: world.NewPace(1)}}
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
func awaitReply[R any](ctx context.Context, w world.Streams, token, resumeID string, timeout time.Duration) (reply R, err error) {
	ctx, span := engine.StartSpan(ctx, "workflow.reply.await", trace.SpanKindConsumer)
	defer func() { engine.EndSpan(span, err) }()
	waitCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	rr := newReplyReader(w, resumeID)
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
