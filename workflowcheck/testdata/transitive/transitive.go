// Package transitive reaches forbidden calls through helpers of the same
// package: called, taken as values, methods, generic functions.
package transitive

import (
	"os"
	"slices"
	"time"

	"github.com/lambdaworkflow/workflow"
)

func stamp() string {
	return clock().String()
}

func clock() time.Time {
	return time.Now() // want `time.Now in workflow code \(reached via stamp → clock\): use workflow.Now\(ctx\)`
}

type config struct{ name string }

func (c *config) load() {
	c.name = os.Getenv("NAME") // want `os.Getenv in workflow code \(reached via config.load\): do it in a step`
}

func newest[T any](xs []T) T {
	time.Sleep(time.Millisecond) // want `time.Sleep in workflow code \(reached via newest\): use workflow.Sleep\(ctx, d\)`
	return xs[len(xs)-1]
}

func byLength(a, b string) int {
	<-time.After(time.Second) // want `time.After in workflow code \(reached via byLength\)` `channel receive in workflow code \(reached via byLength\)`
	return len(a) - len(b)
}

// run is a named workflow function, passed to Define.
func run(ctx workflow.Context, names []string) (string, error) {
	var c config
	c.load()
	slices.SortFunc(names, byLength) // a function value is reached too
	return stamp() + newest(names), nil
}

var Run = workflow.Define("run", run)

// helper takes a workflow.Context, so it is workflow code without a Define.
func helper(ctx workflow.Context) int {
	return time.Now().Second() // want `time.Now in workflow code: use workflow.Now\(ctx\)`
}

type flow struct{}

// step is a method taking a workflow.Context: workflow code as well.
func (flow) step(ctx workflow.Context) {
	go helper(ctx) // want `go statement in workflow code: use workflow.Go`
}

// unused is called by nothing that is workflow code.
func unused() time.Time { return time.Now() }
