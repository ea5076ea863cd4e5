package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

func TestClassifyErrorRetriesWhatAskingAgainCanFix(t *testing.T) {
	soon := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		status int
		header http.Header
		retry  bool
		after  time.Duration // at least
	}{
		{429, http.Header{"Retry-After": {"20"}}, true, 20 * time.Second},
		{429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, true, 1500 * time.Millisecond},
		{429, http.Header{"Retry-After": {soon}}, true, 80 * time.Second},
		{503, nil, true, 0},
		{529, nil, true, 0},
		{408, nil, true, 0},
		{400, http.Header{"Retry-After": {"20"}}, false, 0},
		{401, nil, false, 0},
		{404, nil, false, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status, c.header), func(t *testing.T) {
			err := agent.ClassifyError(errors.New("provider said no"), c.status, c.header)
			var retryable *workflow.RetryableError
			var fatal *workflow.FatalError
			if c.retry != errors.As(err, &retryable) || c.retry == errors.As(err, &fatal) {
				t.Fatalf("%d: %#v", c.status, err)
			}
			if c.retry && (retryable.RetryAfter < c.after || retryable.RetryAfter > c.after+15*time.Second) {
				t.Errorf("%d: retry after %s, want %s", c.status, retryable.RetryAfter, c.after)
			}
		})
	}
	// No answer (a dropped connection) is retried with the step's
	// backoff; a cancelled call is left as it is.
	unmarked := func(got, err error) bool {
		var retryable *workflow.RetryableError
		var fatal *workflow.FatalError
		return errors.Is(got, err) && !errors.As(got, &retryable) && !errors.As(got, &fatal)
	}
	for _, err := range []error{errors.New("connection reset"), context.Canceled} {
		if got := agent.ClassifyError(err, 0, nil); !unmarked(got, err) {
			t.Errorf("%v became %#v", err, got)
		}
	}
	if got := agent.ClassifyError(context.Canceled, 500, nil); !unmarked(got, context.Canceled) {
		t.Errorf("a cancelled call became %#v", got)
	}
}
