package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/lambdaworkflow/workflow/codec"
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
type frame struct {
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

// Errors of a reply, matched with errors.Is; package workflow exports
// them under the same names.
var (
	// ErrAlreadyResponded: a second reply to the same message.
	ErrAlreadyResponded = errors.New("workflow: the message has already been responded to")
	// ErrReplyRestarted: the step sending a streamed reply was retried,
	// and its retry sends the reply again from the top.
	ErrReplyRestarted = errors.New("workflow: the reply is being sent again from the top by a retried step")
	// ErrHookResponseNotSent: the run ended without (completing) a reply.
	ErrHookResponseNotSent = errors.New("workflow: the hook's run ended without sending a response")
)

// Rejection is the frame that tells the caller of a resume that the
// workflow of run runID could not take its message, for err.
func Rejection(runID string, err error) []byte {
	return mustJSON(frame{By: replier{Run: runID}, Start: true, End: true, Rejected: err.Error()})
}

// Items produces a streamed reply's items, handing each to emit.
type Items func(emit func(json.RawMessage) error) error

// answering holds the step attempts sending a reply in this process, so
// that two concurrent replies to one message from one attempt cannot both
// pass the check against the stream.
var answering sync.Map

// Reply sends head, then the items if any, on the reply stream of resume
// resumeID, from the step attempt info. It fails with ErrAlreadyResponded
// if another step, or this attempt already, started the reply; a reply
// nobody reads any more (an earlier attempt completed it, or the run
// ended) is dropped.
func Reply(ctx context.Context, info engine.StepInfo, resumeID string, head json.RawMessage, items Items) error {
	me := replier{Run: info.RunID, Step: info.StepID, Attempt: info.Attempt}
	key := fmt.Sprint(resumeID, me)
	if _, busy := answering.LoadOrStore(key, true); busy {
		return ErrAlreadyResponded
	}
	defer answering.Delete(key)
	s := sender{w: info.World, name: engine.ReplyStream(resumeID), resumeID: resumeID, me: me, seal: info.Codec}
	err := s.send(ctx, head, items)
	if errors.Is(err, world.ErrStreamClosed) {
		return nil
	}
	return err
}

type sender struct {
	w        world.Streams
	name     string
	resumeID string
	me       replier
	seal     *codec.Run // the run's codec; nil for a plain run
}

func (s sender) send(ctx context.Context, head json.RawMessage, items Items) error {
	if err := s.checkUnanswered(ctx); err != nil {
		return err
	}
	head, err := engine.SealValue(s.seal, engine.ReplyPlace(s.resumeID, false), head)
	if err != nil {
		return err
	}
	start := frame{By: s.me, Start: true, Head: head, Items: items != nil, End: items == nil}
	if items == nil {
		if err := s.w.WriteStream(ctx, s.name, [][]byte{mustJSON(start)}); err != nil {
			return err
		}
		return s.w.CloseStream(ctx, s.name)
	}
	cw := newChunkWriter(ctx, s.w, s.name, nil) // the head and items are sealed, not the frames
	err = cw.Write(mustJSON(start))
	if err == nil {
		err = items(func(item json.RawMessage) error {
			sealed, err := engine.SealValue(s.seal, engine.ReplyPlace(s.resumeID, true), item)
			if err != nil {
				return err
			}
			return cw.Write(mustJSON(frame{By: s.me, Item: sealed}))
		})
	}
	if err == nil {
		err = cw.Write(mustJSON(frame{By: s.me, End: true}))
	}
	if ferr := cw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err // no end frame: the caller waits for a retry or the run's end
	}
	return s.w.CloseStream(ctx, s.name)
}

// checkUnanswered fails if another step, or this attempt already, started
// the reply. A closed stream is world.ErrStreamClosed: the reply is over.
func (s sender) checkUnanswered(ctx context.Context) error {
	chunks, closed, err := s.w.ReadStream(ctx, s.name, 0)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		var f frame
		if err := json.Unmarshal(c, &f); err != nil {
			return fmt.Errorf("workflow: reading reply stream %s: %w", s.name, err)
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

// mustJSON encodes a value made only of JSON-safe fields.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("workflow: encoding %T: %v", v, err))
	}
	return b
}
