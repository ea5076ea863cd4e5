package agent

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strconv"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// EventStream is a provider SDK's stream of events, as openai-go's and
// anthropic-sdk-go's streaming calls return it.
type EventStream[E any] interface {
	Next() bool
	Current() E
	Err() error
	Close() error
}

// EventReader turns a provider's stream events into deltas.
type EventReader[E any] interface {
	// Read returns the deltas an event carries.
	Read(event E) []Delta
	// Finish returns the answer's last delta (what the provider tells at
	// the end: usage, finish reason, metadata), or an error if the stream
	// ended before the provider's last event: a dropped connection that
	// the SDK took for the end must not pass for a short answer.
	Finish() (Delta, error)
}

// Relay is the Stream of a Model built on a provider's SDK: it opens the
// provider's stream when the iteration starts, yields what r reads from
// each event, then r's last delta. Every error, opening or reading, goes
// through classify (see [ClassifyError]). It does not retry: the model
// call step does.
func Relay[E any](open func() (EventStream[E], error), r EventReader[E], classify func(error) error) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		stream, err := open()
		if err != nil {
			yield(Delta{}, classify(err))
			return
		}
		defer stream.Close()
		for stream.Next() {
			for _, d := range r.Read(stream.Current()) {
				if !yield(d, nil) {
					return
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(Delta{}, classify(err))
			return
		}
		yield(r.Finish())
	}
}

// ClassifyError marks a provider's failed call for the model call step,
// from the HTTP status it answered (0 if it never answered: a network
// failure, a stream cut short) and its headers. Throttling (429), a
// timeout or conflict (408, 409) and server trouble (5xx, Anthropic's 529
// "overloaded") are retried, after the delay the provider asked for in
// retry-after-ms or Retry-After when it sent one; any other 4xx (a bad
// request, a refused key, an unknown model) fails the call at once, since
// asking again cannot fix it. Provider packages call it; a Model of your
// own may too.
func ClassifyError(err error, status int, header http.Header) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	switch {
	case status == 0:
		return err
	case status == http.StatusTooManyRequests, status == http.StatusRequestTimeout,
		status == http.StatusConflict, status >= 500:
		return workflow.Retryable(err, retryAfter(header))
	case status >= 400:
		return workflow.Fatal(err)
	}
	return err
}

// retryAfter reads the delay a provider asks for: OpenAI's retry-after-ms,
// or the standard Retry-After in seconds or as an HTTP date. It is 0 when
// none is given, which leaves the delay to the step's backoff.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
