package anthropic

import (
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/lambdaworkflow/workflow/agent"
)

// typeStatus is the HTTP status of each of the API's error types
// (https://docs.claude.com/en/api/errors): an error event in a stream
// that began with 200 is classified by its type.
var typeStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"timeout_error":         http.StatusGatewayTimeout,
	"overloaded_error":      529,
}

// classify marks an SDK error retryable or not for the model call step.
func classify(err error) error {
	var api *sdk.Error
	if !errors.As(err, &api) {
		return agent.ClassifyError(fmt.Errorf("anthropic: %w", err), 0, nil)
	}
	status, header := api.StatusCode, http.Header(nil)
	if api.Response != nil {
		header = api.Response.Header
	}
	if s, ok := typeStatus[string(api.Type())]; ok && status/100 == 2 {
		status = s
	}
	return agent.ClassifyError(fmt.Errorf("anthropic: %w", err), status, header)
}
