package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/lambdaworkflow/workflow/internal/stream"
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
		for c, err := range stream.Follow(ctx, r.c.world, r.c.codec, r.ID, namespace, startIndex) {
			if !yield(StreamChunk{Index: c.Index, Data: c.Data}, err) {
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
					err = fmt.Errorf("workflow: stream %q of run %s, chunk %d: decoding into %T: %w", namespace, run.ID, chunk.Index, v, derr)
				}
			}
			if !yield(v, err) {
				return
			}
		}
	}
}
