package workflow

import "github.com/lambdaworkflow/workflow/internal/engine"

// SetAttributes records string attributes on the run, merged into those it
// has, so runs can be found with ListRuns (e.g. customer=42). Keys starting
// with '$' are reserved and rejected.
func SetAttributes(ctx Context, attrs map[string]string) error {
	if err := engine.CheckAttributes(attrs); err != nil {
		return err
	}
	ctx.engine().SetAttributes(attrs, callSite())
	return nil
}
