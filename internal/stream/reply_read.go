package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// ReplyReader reads one resume's reply stream (see frame), following the
// newest attempt of the step that answers.
type ReplyReader struct {
	w        world.World
	chain    *codec.Chain
	resumeID string
	cur      *cursor
	by       *replier // the attempt being followed; nil before the start
	yielded  bool     // items of that attempt were handed out
	ended    bool
	opened   bool       // run is the codec of the run that replies
	run      *codec.Run // nil for a plain run
}

// NewReplyReader returns a reader of the reply to resume resumeID that
// opens sealed replies with chain.
func NewReplyReader(w world.World, chain *codec.Chain, resumeID string) *ReplyReader {
	return &ReplyReader{w: w, chain: chain, resumeID: resumeID,
		cur: &cursor{streams: w, name: engine.ReplyStream(resumeID), pace: world.NewPace(1)}}
}

// Start is the start of a reply.
type Start struct {
	Head     json.RawMessage // the reply, or what precedes its items
	Items    bool            // items follow: read them with Next
	Rejected string          // why the workflow could not take the message; no reply follows
}

// Start waits for the reply to start. A stream that closes first means
// the run ended without a reply: ErrHookResponseNotSent.
func (r *ReplyReader) Start(ctx context.Context) (Start, error) {
	f, err := r.frame(ctx)
	if err != nil {
		return Start{}, err
	}
	r.ended = f.End
	return Start{Head: f.Head, Items: f.Items, Rejected: f.Rejected}, nil
}

// Next returns the reply's next item: io.EOF after the last one,
// ErrReplyRestarted when a retry starts the items over.
func (r *ReplyReader) Next(ctx context.Context) (json.RawMessage, error) {
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

// open decodes a frame's head or item with the codec of the run that
// wrote it, which it reads once, at the first part that needs it: a
// reader without codecs reads a plain run's reply with no request more.
func (r *ReplyReader) open(ctx context.Context, by replier, raw json.RawMessage, item bool) (json.RawMessage, error) {
	if raw == nil || (!r.opened && r.chain == nil && !engine.IsSealedValue(raw)) {
		return raw, nil
	}
	if !r.opened {
		run, err := r.w.GetRun(ctx, by.Run)
		if err != nil {
			return nil, err
		}
		if r.run, err = engine.OpenRun(ctx, r.chain, run); err != nil {
			return nil, err
		}
		r.opened = true
	}
	return engine.OpenValue(r.run, engine.ReplyPlace(r.resumeID, item), raw)
}

// frame returns the next frame that matters: a start by a newer attempt,
// or a frame of the attempt being followed. A stream that closes first
// means the run ended without (completing) a reply.
func (r *ReplyReader) frame(ctx context.Context) (frame, error) {
	for {
		chunk, _, err := r.cur.read(ctx)
		if errors.Is(err, io.EOF) {
			return frame{}, ErrHookResponseNotSent
		}
		if err != nil {
			return frame{}, err
		}
		var f frame
		if err := json.Unmarshal(chunk, &f); err != nil {
			return frame{}, fmt.Errorf("reading reply stream %s: %w", r.cur.name, err)
		}
		if f.Head, err = r.open(ctx, f.By, f.Head, false); err != nil {
			return frame{}, fmt.Errorf("reading reply stream %s: %w", r.cur.name, err)
		}
		if f.Item, err = r.open(ctx, f.By, f.Item, true); err != nil {
			return frame{}, fmt.Errorf("reading reply stream %s: %w", r.cur.name, err)
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
