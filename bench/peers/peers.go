// Package peers runs the benchmark suite's workflows on other Go
// durable-execution libraries, DBOS Transact Go and go-workflows, so that
// the benchmark command measures this SDK and its peers side by side, in
// one process and one run. It is a module of its own: the peers'
// dependencies reach neither the SDK's nor the bench module's builds.
package peers

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/lambdaworkflow/workflow/bench"
)

// Subjects are the peers, in report order.
func Subjects() []bench.Subject { return []bench.Subject{DBOS(), GoWorkflows()} }

// timeout is what is left of ctx's deadline, for the peers' result waits,
// which take a timeout instead of a context; an hour without a deadline.
func timeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d)
	}
	return time.Hour
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
