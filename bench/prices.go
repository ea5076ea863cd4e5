package bench

import (
	"fmt"
	"io"
	"strings"

	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// usEast1 holds the public us-east-1 list prices the cost model uses, in
// dollars, past each free tier, as the AWS pricing pages list them:
//   - DynamoDB on demand, after its November 2024 reduction:
//     https://aws.amazon.com/dynamodb/pricing/on-demand/
//   - SQS standard queues, per request (a request carries up to 64 KB):
//     https://aws.amazon.com/sqs/pricing/
//   - S3 Standard: https://aws.amazon.com/s3/pricing/
//   - Lambda on arm64 (the template's architecture):
//     https://aws.amazon.com/lambda/pricing/
//   - EventBridge Scheduler bills invocations, not its API calls:
//     https://aws.amazon.com/eventbridge/pricing/
//   - AppSync Events, per operation (a connect, a publish, a subscribe,
//     each delivery; connection minutes apart):
//     https://aws.amazon.com/appsync/pricing/
//
// Prices change; check the pages before planning on these.
var usEast1 = prices{
	AsOf:                "AWS list prices, us-east-1, as published in 2025",
	WriteUnit:           0.625 / 1e6,
	ReadUnit:            0.125 / 1e6,
	DynamoDBGBMonth:     0.25,
	SQSRequest:          0.40 / 1e6,
	S3Write:             0.005 / 1e3, // PUT, COPY, POST, LIST
	S3Read:              0.0004 / 1e3,
	S3GBMonth:           0.023,
	LambdaRequest:       0.20 / 1e6,
	LambdaGBSecond:      0.0000133334,
	SchedulerInvocation: 1.00 / 1e6,
	AppSyncOperation:    1.00 / 1e6,
}

type prices struct {
	AsOf                                 string
	WriteUnit, ReadUnit, DynamoDBGBMonth float64
	SQSRequest                           float64
	S3Write, S3Read, S3GBMonth           float64
	LambdaRequest, LambdaGBSecond        float64
	SchedulerInvocation                  float64
	AppSyncOperation                     float64
}

// lambdaMemoryGB is the flow function's memory in template.yaml.
const lambdaMemoryGB = 0.25

// hopsPerDay: a sleep with no scheduler wakes at SQS's 15-minute limit.
const hopsPerDay = 24 * 4

// Dollars is the cost model in money, at the prices of AsOf. Lambda's
// duration is priced apart, per 100 ms: it is mostly the user's step code.
type Dollars struct {
	AsOf string `json:"asOf"`
	// Per1000InlineSteps: the log writes of 1,000 inline steps.
	Per1000InlineSteps float64 `json:"per1000InlineSteps"`
	// PerResume: one resume cycle, and the flow invocation it wakes.
	PerResume float64 `json:"perResume"`
	// PerSleepingDay: a day of a long sleep on the 15-minute hop chain:
	// each hop is the flow function's receive, the check and re-queue,
	// the delete and the invocation.
	PerSleepingDay float64 `json:"perSleepingDay"`
	// PerScheduledSleep: a whole sleep of any length through EventBridge
	// Scheduler: one invocation of the schedule, then one delivery.
	PerScheduledSleep float64 `json:"perScheduledSleep"`
	// PerGBMonth: storage of retained runs, in DynamoDB and in S3 (the
	// payloads too large for an item).
	PerGBMonthDynamoDB float64 `json:"perGBMonthDynamoDB"`
	PerGBMonthS3       float64 `json:"perGBMonthS3"`
	// LambdaPer100ms: the flow function's duration, per 100 ms.
	LambdaPer100ms float64 `json:"lambdaPer100ms"`
}

// price returns c in dollars at p.
func (p prices) price(c *Costs) *Dollars {
	// One delivery to the flow function: the event source mapping's
	// receive, the delete of the batch, the invocation.
	delivery := 2*p.SQSRequest + p.LambdaRequest
	return &Dollars{
		AsOf:               p.AsOf,
		Per1000InlineSteps: 1000 * p.of(c.PerStep, c.PerStepUnits),
		PerResume:          p.of(c.PerResume, c.PerResumeUnits) + p.LambdaRequest,
		PerSleepingDay:     hopsPerDay * (p.of(c.PerHop, c.PerHopUnits) + delivery),
		PerScheduledSleep:  p.SchedulerInvocation + delivery,
		PerGBMonthDynamoDB: p.DynamoDBGBMonth,
		PerGBMonthS3:       p.S3GBMonth,
		LambdaPer100ms:     0.1 * lambdaMemoryGB * p.LambdaGBSecond,
	}
}

// of prices API calls and DynamoDB request units. DynamoDB bills units,
// not calls; SQS every request; S3 writes and reads at their own rates
// (deletes are free); a Lambda Invoke is a request, an AppSync Events
// publish, connect or subscribe an operation.
func (p prices) of(calls map[string]float64, units awsworld.RequestUnits) float64 {
	dollars := units.Read*p.ReadUnit + units.Write*p.WriteUnit
	for call, n := range calls {
		service, op, _ := strings.Cut(call, ".")
		switch {
		case service == "SQS":
			dollars += n * p.SQSRequest
		case service == "S3" && (op == "GetObject" || op == "HeadObject"):
			dollars += n * p.S3Read
		case service == "S3" && op != "DeleteObject" && op != "DeleteObjects":
			dollars += n * p.S3Write
		case service == "Lambda" && op == "Invoke":
			dollars += n * p.LambdaRequest
		case service == "AppSync" && op != "EventPublishFailed":
			dollars += n * p.AppSyncOperation
		}
	}
	return dollars
}

// writeDollars reports the cost model's request units and dollars.
func writeDollars(out io.Writer, world string, c *Costs) {
	fmt.Fprintf(out, "%s: DynamoDB request units: per inline step %.3g write, %.3g read; per resume cycle %.3g write, %.3g read; per early hop %.3g write, %.3g read\n",
		world, c.PerStepUnits.Write, c.PerStepUnits.Read, c.PerResumeUnits.Write, c.PerResumeUnits.Read, c.PerHopUnits.Write, c.PerHopUnits.Read)
	if d := c.Dollars; d != nil {
		fmt.Fprintf(out, "%s: dollars (%s): 1,000 inline steps $%.5f; a resume $%.7f; a day of sleep by 15-minute hops $%.6f, a whole sleep by Scheduler $%.7f; storage $%.3g/GB-month in DynamoDB, $%.3g in S3; Lambda $%.2g per 100 ms at %g GB\n",
			world, d.AsOf, d.Per1000InlineSteps, d.PerResume, d.PerSleepingDay, d.PerScheduledSleep, d.PerGBMonthDynamoDB, d.PerGBMonthS3, d.LambdaPer100ms, lambdaMemoryGB)
	}
}
