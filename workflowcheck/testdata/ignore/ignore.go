// Package ignore silences findings with //workflowcheck:ignore.
package ignore

import (
	"os"
	"time"

	"github.com/lambdaworkflow/workflow"
)

var Ignored = workflow.Define("ignored", func(ctx workflow.Context, m map[string]int) (int, error) {
	_ = os.Getpid() //workflowcheck:ignore only logged, never decides anything

	//workflowcheck:ignore the sum does not depend on the order
	for _, v := range m {
		_ = v + time.Now().Second() // silenced with the statement it is in
	}
	total := 0
	for _, v := range m { // want `range over a map in workflow code`
		total += v
	}

	//workflowcheck:ignore the helper's clock reading is only logged
	logNow()
	// The directive above silenced one statement, not this one.
	_ = os.Getpid() // want `os.Getpid in workflow code`

	trusted()
	return total, nil
})

func logNow() { _ = time.Now() }

// trusted is left unchecked as a whole, from its doc comment.
//
//workflowcheck:ignore it reads the clock only to log
func trusted() { _ = time.Now() }

var Spread = workflow.Define("spread", func(ctx workflow.Context, n int) (int, error) {
	//workflowcheck:ignore the coroutine's clock reading is only logged
	f := workflow.Go(ctx,
		func(ctx workflow.Context) (int, error) { return time.Now().Second(), nil },
	)
	return f.Get(ctx)
})
