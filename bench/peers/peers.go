// Package peers runs the benchmark suite's workflows on other Go
// durable-execution libraries, DBOS Transact Go and go-workflows, so that
// the benchmark command measures this SDK and its peers side by side, in
// one process and one run. It is a module of its own: the peers'
// dependencies reach neither the SDK's nor the bench module's builds.
package peers

import (
	"io"
	"log/slog"

	"github.com/lambdaworkflow/workflow/bench"
)

// Subjects are the peers, in report order.
func Subjects() []bench.Subject { return []bench.Subject{DBOS(), GoWorkflows()} }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
