package worldtest

import (
	"reflect"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// optional returns the World's optional capability C, or skips the test,
// naming C: a World without it passes the rules that need it.
func optional[C any](t *testing.T, w world.World) C {
	t.Helper()
	c, ok := w.(C)
	if !ok {
		t.Skipf("this World does not implement the optional %v", reflect.TypeFor[C]())
	}
	return c
}
