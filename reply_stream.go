package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"

	"github.com/lambdaworkflow/workflow/internal/stream"
)

// Stream is a reply whose values are produced over time: a step responds
// with one, and the caller of ResumeRespondingHook ranges over its values
// as the step produces them, e.g. a chat answer token by token.
//
//	// step
//	return struct{}{}, msg.Respond(ctx, workflow.NewStream(func(yield func(string) bool) error {
//		for tok := range model.Generate(ctx, msg.Data) {
//			if !yield(tok) { return nil }
//		}
//		return nil
//	}))
//
//	// caller
//	answer, err := workflow.ResumeRespondingHook[Question, workflow.Stream[string]](ctx, c, token, q)
//	for tok, err := range answer.All(ctx) { ... }
//
// The step writes values to the World as they come, batching those that
// pile up while a write is in flight, and never waits for the caller; the
// caller reads them in pages. Neither side holds more than a bounded
// number of values in memory. A Stream can be a reply, or the body of a
// WebhookResponse; it cannot be a step's result or a workflow's input.
type Stream[T any] struct {
	produce func(yield func(T) bool) error // the step's side
	src     *stream.ReplyReader            // the caller's side
}

// NewStream returns a Stream of the values produce yields. produce stops
// early when yield returns false (the reply can no longer be delivered).
// An error from produce fails Respond, so the step fails and its retry
// sends the reply again from the top.
func NewStream[T any](produce func(yield func(T) bool) error) Stream[T] {
	return Stream[T]{produce: produce}
}

// All iterates over the stream's values as they arrive, until the last.
// When the step sending them was retried, it yields [ErrReplyRestarted]:
// what came before was a failed attempt's, and the values start over
// (continue the loop to read them, or stop). Any other error ends the
// loop, e.g. [ErrHookResponseNotSent] if the run ended midway, or ctx's.
// A stream is read once: a second All continues where the first stopped.
func (s Stream[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if s.src == nil {
			s.produceInto(yield)
			return
		}
		for {
			var v T
			raw, err := s.src.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err == nil {
				err = json.Unmarshal(raw, &v)
			}
			if !yield(v, err) || (err != nil && !errors.Is(err, ErrReplyRestarted)) {
				return
			}
		}
	}
}

// produceInto runs the producer in place: a Stream read where it was made
// (in a test, say) yields what it produces.
func (s Stream[T]) produceInto(yield func(T, error) bool) {
	if s.produce == nil {
		return
	}
	stopped := false
	err := s.produce(func(v T) bool {
		stopped = !yield(v, nil)
		return !stopped
	})
	if err != nil && !stopped {
		var zero T
		yield(zero, err)
	}
}

// MarshalJSON refuses: a Stream's values exist only while it is sent, so it
// can only travel as a reply.
func (s Stream[T]) MarshalJSON() ([]byte, error) {
	return nil, errors.New("workflow: a Stream can only be sent as a reply (HookMessage.Respond)")
}

func (s Stream[T]) replyHead() (json.RawMessage, error) { return nil, nil }

func (s Stream[T]) replyItems() stream.Items {
	return func(emit func(json.RawMessage) error) error {
		if s.produce == nil {
			return nil
		}
		var emitErr error
		err := s.produce(func(v T) bool {
			raw, err := json.Marshal(v)
			if err == nil {
				err = emit(raw)
			}
			emitErr = err
			return err == nil
		})
		if emitErr != nil {
			return emitErr
		}
		return err
	}
}

func (s *Stream[T]) attachItems(src *stream.ReplyReader) { s.src = src }
