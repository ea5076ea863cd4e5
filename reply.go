package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	payloadcodec "github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// A reply travels on its own stream, replies/{resumeID}, made of frames.
// The stream is the reply channel of one resume call: concurrent callers
// never share one, and nothing of the reply goes into the event log.
//
// Every frame names the step attempt that wrote it. An attempt writes a
// start frame (the reply, or for a streamed reply what precedes its
// items), then its items, then an end frame, and closes the stream. A
// retried step writes a new start frame with its new attempt number, and
// the reader follows the newest attempt of the step that answered first;
// frames of older attempts are skipped. The run closes the stream when it
// ends, so a reader that finds the stream closed before an end frame
// knows no reply is coming. In a sealed run, the head and each item are
// sealed with the run's codec (engine.ReplyPlace); the rest of a frame
// stays readable.
type replyFrame struct {
	By    replier         `json:"by"`
	Start bool            `json:"start,omitempty"`
	Head  json.RawMessage `json:"head,omitempty"`  // start: the reply, or what precedes its items
	Items bool            `json:"items,omitempty"` // start: items follow
	Item  json.RawMessage `json:"item,omitempty"`
	End   bool            `json:"end,omitempty"`
	// Rejected, on a start frame the workflow itself writes, says why it
	// could not take the message: no step will answer it.
	Rejected string `json:"rejected,omitempty"`
}

// replier is the step attempt that wrote a frame.
type replier struct {
	Run     string `json:"run"`
	Step    string `json:"step"`
	Attempt int    `json:"attempt"`
}

// supersedes reports whether r is a retry of the attempt o.
func (r replier) supersedes(o replier) bool {
	return r.Run == o.Run && r.Step == o.Step && r.Attempt > o.Attempt
}

// rejectMessage tells the caller of resume resumeID that the workflow
// could not take its message, for err.
func rejectMessage(ctx Context, resumeID string, err error) {
	f := replyFrame{By: replier{Run: ctx.RunID()}, Start: true, End: true, Rejected: err.Error()}
	ctx.engine().RejectMessage(resumeID, mustJSON(f))
}

// streamingReply is a reply whose tail is produced over time: a Stream,
// or a WebhookResponse whose body streams.
type streamingReply interface {
	// replyHead is what the caller gets at once.
	replyHead() (json.RawMessage, error)
	// replyItems produces the tail, item by item; nil if there is none.
	replyItems() func(emit func(json.RawMessage) error) error
}

// replyTail is the caller's side of a streamingReply: it is handed the
// source of the items when the reply starts.
type replyTail interface {
	attachItems(src itemSource)
}

// itemSource yields a streamed reply's items: io.EOF after the last one,
// ErrReplyRestarted when a retry starts the items over.
type itemSource interface {
	next(ctx context.Context) (json.RawMessage, error)
}

// answering holds the step attempts sending a reply in this process, so
// that two concurrent Responds to one message from one attempt cannot both
// pass the check against the stream.
var answering sync.Map

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
	me := replier{Run: info.RunID, Step: info.StepID, Attempt: info.Attempt}
	key := fmt.Sprint(resumeID, me)
	if _, busy := answering.LoadOrStore(key, true); busy {
		return ErrAlreadyResponded
	}
	defer answering.Delete(key)
	s := replySender{w: info.World, name: engine.ReplyStream(resumeID), resumeID: resumeID, me: me, seal: info.Codec}
	err = s.send(ctx, head, items)
	if errors.Is(err, world.ErrStreamClosed) {
		// An earlier attempt of this step completed the reply, or the run
		// ended: nobody reads this reply any more.
		return nil
	}
	return err
}

func encodeReply(reply any) (head json.RawMessage, items func(emit func(json.RawMessage) error) error, err error) {
	if s, ok := reply.(streamingReply); ok {
		head, err = s.replyHead()
		return head, s.replyItems(), err
	}
	head, err = json.Marshal(reply)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding reply %T: %w", reply, err)
	}
	return head, nil, nil
}

type replySender struct {
	w        world.Streams
	name     string
	resumeID string
	me       replier
	seal     *payloadcodec.Run // the run's codec; nil for a plain run
}

func (s replySender) send(ctx context.Context, head json.RawMessage, items func(emit func(json.RawMessage) error) error) error {
	if err := s.checkUnanswered(ctx); err != nil {
		return err
	}
	head, err := engine.SealValue(s.seal, engine.ReplyPlace(s.resumeID, false), head)
	if err != nil {
		return err
	}
	start := replyFrame{By: s.me, Start: true, Head: head, Items: items != nil, End: items == nil}
	if items == nil {
		if err := s.w.WriteStream(ctx, s.name, [][]byte{mustJSON(start)}); err != nil {
			return err
		}
		return s.w.CloseStream(ctx, s.name)
	}
	cw := newChunkWriter(ctx, s.w, s.name)
	err = cw.write(mustJSON(start))
	if err == nil {
		err = items(func(item json.RawMessage) error {
			sealed, err := engine.SealValue(s.seal, engine.ReplyPlace(s.resumeID, true), item)
			if err != nil {
				return err
			}
			return cw.write(mustJSON(replyFrame{By: s.me, Item: sealed}))
		})
	}
	if err == nil {
		err = cw.write(mustJSON(replyFrame{By: s.me, End: true}))
	}
	if ferr := cw.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err // no end frame: the caller waits for a retry or the run's end
	}
	return s.w.CloseStream(ctx, s.name)
}

// checkUnanswered fails if another step, or this attempt already, started
// the reply. A closed stream is world.ErrStreamClosed: the reply is over.
func (s replySender) checkUnanswered(ctx context.Context) error {
	chunks, closed, err := s.w.ReadStream(ctx, s.name, 0)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		var f replyFrame
		if err := json.Unmarshal(c, &f); err != nil {
			return fmt.Errorf("reading reply stream %s: %w", s.name, err)
		}
		if f.Start && !s.me.supersedes(f.By) {
			return ErrAlreadyResponded
		}
	}
	if closed {
		return world.ErrStreamClosed
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("workflow: encoding %T: %v", v, err)) // frames hold only JSON-safe fields
	}
	return b
}
