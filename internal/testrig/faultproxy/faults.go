package faultproxy

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Answer is what a faulted call gets instead of the emulator's answer.
// Throttled calls and server errors are not forwarded: like AWS under
// load, the service did nothing.
type Answer int

const (
	// Throttle answers HTTP 400 with DynamoDB's error document, alternating
	// ThrottlingException and ProvisionedThroughputExceededException (on
	// on-demand tables AWS sends either). Only DynamoDB calls throttle this
	// way; match others with ServerError.
	Throttle Answer = iota
	// ServerError answers HTTP 500 InternalServerError (S3: InternalError),
	// in the service's own error format.
	ServerError
	// LostAnswer forwards the call, then answers ServerError in place of
	// the emulator's answer: the service did the work and the caller does
	// not know it, as when a connection drops after the request landed.
	// The SDK retries, so every retried write must be safe to repeat.
	LostAnswer
)

// Storm faults a share of the calls that match, for a while.
type Storm struct {
	Match  func(Call) bool
	Rate   float64       // share of matching calls faulted, 0 to 1
	For    time.Duration // from Inject
	Answer Answer
}

// DynamoDBWrites matches DynamoDB's write operations.
func DynamoDBWrites(c Call) bool { return c.Service == "DynamoDB" && c.Write }

// Writes matches every write call.
func Writes(c Call) bool { return c.Write }

// storm is an injected Storm with its end.
type storm struct {
	Storm
	until time.Time
}

// strikes reports whether the storm faults c now.
func (s storm) strikes(c Call, now time.Time) bool {
	return now.Before(s.until) && s.Match(c) && rand.Float64() < s.Rate
}

// dynamoThrottles are the codes DynamoDB throttles with, used in turn.
var dynamoThrottles = []string{"ThrottlingException", "ProvisionedThroughputExceededException"}

// faultResponse writes the answer a to c; n numbers the faults, to vary
// the throttling code.
func faultResponse(rw http.ResponseWriter, c Call, a Answer, n int64) {
	status, code := http.StatusInternalServerError, "InternalServerError"
	if a == Throttle {
		status, code = http.StatusBadRequest, dynamoThrottles[n%int64(len(dynamoThrottles))]
	}
	h := rw.Header()
	h.Set("X-Amzn-Requestid", fmt.Sprintf("faultproxy-%d", n))
	if c.Service == "S3" {
		h.Set("Content-Type", "application/xml")
		rw.WriteHeader(status)
		fmt.Fprintf(rw, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected by faultproxy</Message></Error>`)
		return
	}
	// The JSON protocols: smithy reads the code from __type, after '#'.
	namespace := "com.amazonaws.dynamodb.v20120810"
	if c.Service == "SQS" {
		namespace = "com.amazonaws.sqs"
		h.Set("X-Amzn-Query-Error", code+";Receiver")
	}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Errortype", code)
	rw.WriteHeader(status)
	fmt.Fprintf(rw, `{"__type":"%s#%s","message":"injected by faultproxy"}`, namespace, code)
}
