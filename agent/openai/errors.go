package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/lambdaworkflow/workflow/agent"
)

// classify marks an SDK error retryable or not for the model call step,
// with the server's message (the SDK's error says only the status).
func classify(err error) error {
	var api *sdk.Error
	if errors.As(err, &api) {
		var header http.Header
		if api.Response != nil {
			header = api.Response.Header
		}
		return agent.ClassifyError(fmt.Errorf("%w: %s", err, api.Message), api.StatusCode, header)
	}
	var inband *ssestream.StreamError
	if errors.As(err, &inband) {
		return agent.ClassifyError(fmt.Errorf("openai: %w", err), streamErrorStatus(inband), nil)
	}
	return agent.ClassifyError(fmt.Errorf("openai: %w", err), 0, nil)
}

// streamErrorStatus classifies an error the server sent inside a stream
// that had started with 200, by its type: a request the server refused
// fails, anything else (a server error, a rate limit) is retried.
func streamErrorStatus(e *ssestream.StreamError) int {
	var body struct {
		Error struct{ Type, Code string }
	}
	_ = json.Unmarshal(e.Event.Data, &body) // unreadable: a server error
	switch body.Error.Type {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "rate_limit_error", "rate_limit_exceeded", "tokens", "requests":
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}
