package workflow

import "fmt"

// SetAttributes records string attributes on the run, merged into those it
// has, so runs can be found with ListRuns (e.g. customer=42). Keys starting
// with '$' are reserved and rejected.
func SetAttributes(ctx Context, attrs map[string]string) error {
	for k := range attrs {
		if len(k) > 0 && k[0] == '$' {
			return fmt.Errorf("workflow: attribute %q: keys starting with '$' are reserved", k)
		}
	}
	ctx.engine().SetAttributes(attrs, callSite())
	return nil
}
