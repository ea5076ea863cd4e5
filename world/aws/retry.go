package aws

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxAttempts bounds the SDK's retries of throttling, 5xx and connection
// errors (the standard retryer's defaults) for every call.
const maxAttempts = 5

// newRetryer returns the SDK's standard retryer, told never to retry a
// refused condition: such a refusal is an answer, and sending the same
// write again cannot change it.
func newRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(neverRetryConditions)}, o.Retryables...)
	})
}

func neverRetryConditions(err error) aws.Ternary {
	var ccf *types.ConditionalCheckFailedException
	var tce *types.TransactionCanceledException
	if errors.As(err, &ccf) || errors.As(err, &tce) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
}
