package bedrock

import (
	"errors"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	"github.com/lambdaworkflow/workflow/agent"
)

// codeStatus gives the HTTP status that classifies each of Converse's
// errors (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html#API_runtime_ConverseStream_Errors).
// An exception in the middle of a stream arrives without one; and a model
// whose stream broke (ModelStreamErrorException, 424) is worth asking
// again, as AWS advises, unlike other 4xx.
var codeStatus = map[string]int{
	"ThrottlingException":         http.StatusTooManyRequests,
	"ModelNotReadyException":      http.StatusTooManyRequests,
	"ServiceUnavailableException": http.StatusServiceUnavailable,
	"InternalServerException":     http.StatusInternalServerError,
	"ModelStreamErrorException":   http.StatusServiceUnavailable,
	"ModelTimeoutException":       http.StatusRequestTimeout,
	"ValidationException":         http.StatusBadRequest,
	"AccessDeniedException":       http.StatusForbidden,
	"ResourceNotFoundException":   http.StatusNotFound,
	"ModelErrorException":         http.StatusFailedDependency,
}

// classify marks an SDK error retryable or not for the model call step.
func classify(err error) error {
	status, header := 0, http.Header(nil)
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) {
		status, header = resp.HTTPStatusCode(), resp.Response.Header
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if s, ok := codeStatus[api.ErrorCode()]; ok {
			status = s
		}
	}
	return agent.ClassifyError(err, status, header)
}
