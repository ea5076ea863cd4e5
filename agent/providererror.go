package agent

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/lambdaworkflow/workflow"
)

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
