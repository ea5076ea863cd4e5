package aws

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// callCounter counts the requests the World's clients send, per service and
// operation. It sits inside the SDK's retry loop, so a retried call counts
// once per attempt: what AWS sees, and what proves a call was not retried.
type callCounter struct {
	mu     sync.Mutex
	counts map[string]int64
	units  unitCounter
}

func newCallCounter() *callCounter { return &callCounter{counts: map[string]int64{}} }

// register adds the counting middleware to a client's stack, after the
// retry middleware of the finalize step.
func (c *callCounter) register(stack *middleware.Stack) error {
	if err := c.units.register(stack); err != nil {
		return err
	}
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("workflowCallCounter",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			c.add(awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx))
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

func (c *callCounter) add(key string) {
	c.mu.Lock()
	c.counts[key]++
	c.mu.Unlock()
}

// Calls returns how many requests the World has sent to AWS since it was
// made or since ResetCalls, keyed "Service.Operation", e.g.
// "DynamoDB.TransactWriteItems". Retries count once per attempt.
func (w *World) Calls() map[string]int64 {
	w.calls.mu.Lock()
	defer w.calls.mu.Unlock()
	return maps.Clone(w.calls.counts)
}

// ResetCalls sets every count Calls and Units report back to zero.
func (w *World) ResetCalls() {
	w.calls.mu.Lock()
	clear(w.calls.counts)
	w.calls.mu.Unlock()
	w.calls.units.reset()
}

// Units returns the DynamoDB request units the World's calls consumed
// since it was made or since ResetCalls.
func (w *World) Units() RequestUnits { return w.calls.units.get() }
