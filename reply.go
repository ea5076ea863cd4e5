package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/stream"
)

// A reply travels on a stream of its own, one per resume call (package
// internal/stream): a step writes it with Respond, the caller of the
// resume reads it with awaitReply, and nothing of it goes into the log.

// rejectMessage tells the caller of resume resumeID that the workflow
// could not take its message, for err.
func rejectMessage(ctx Context, resumeID string, err error) {
	ctx.engine().RejectMessage(resumeID, stream.Rejection(ctx.RunID(), err))
}

// streamingReply is a reply whose tail is produced over time: a Stream,
// or a WebhookResponse whose body streams.
type streamingReply interface {
	// replyHead is what the caller gets at once.
	replyHead() (json.RawMessage, error)
	// replyItems produces the tail, item by item; nil if there is none.
	replyItems() stream.Items
}

// replyTail is the caller's side of a streamingReply: it is handed the
// reader of the items when the reply starts.
type replyTail interface {
	attachItems(src *stream.ReplyReader)
}

// respond sends reply on the reply stream of resume resumeID, from the
// step whose context ctx is.
func respond(ctx context.Context, resumeID string, reply any) error {
	info, ok := engine.StepInfoFrom(ctx)
	if !ok {
		return fmt.Errorf("Respond: %w", ErrNotInStep)
	}
	if resumeID == "" {
		return ErrNoReplyChannel
	}
	head, items, err := encodeReply(reply)
	if err != nil {
		return Fatal(err) // the same value will not encode on a retry either
	}
	return stream.Reply(ctx, info, resumeID, head, items)
}

func encodeReply(reply any) (head json.RawMessage, items stream.Items, err error) {
	if s, ok := reply.(streamingReply); ok {
		head, err = s.replyHead()
		return head, s.replyItems(), err
	}
	head, err = json.Marshal(reply)
	if err != nil {
		return nil, nil, fmt.Errorf("workflow: encoding reply %T: %w", reply, err)
	}
	return head, nil, nil
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
	rr := stream.NewReplyReader(c.world, c.codec, resumeID)
	start, err := rr.Start(waitCtx)
	if err != nil {
		return reply, fmt.Errorf("workflow: waiting for the reply of hook %q: %w", token, err)
	}
	if start.Rejected != "" {
		return reply, fmt.Errorf("workflow: hook %q: %w: %s", token, ErrHookMessageRejected, start.Rejected)
	}
	if len(start.Head) > 0 {
		if err := json.Unmarshal(start.Head, &reply); err != nil {
			return reply, fmt.Errorf("workflow: hook %q: decoding the reply into %T: %w", token, reply, err)
		}
	}
	if start.Items {
		tail, ok := any(&reply).(replyTail)
		if !ok {
			return reply, fmt.Errorf("workflow: hook %q replied with a stream, which %T cannot hold (use workflow.Stream)", token, reply)
		}
		tail.attachItems(rr)
	}
	return reply, nil
}
