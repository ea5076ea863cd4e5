package local_test

import (
	"testing"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
	"github.com/lambdaworkflow/workflow/world/worldtest/flowtest"
)

// TestFlows runs the end-to-end hook, reply, webhook and stream scenarios
// with a real worker on the embedded World, one directory per scenario.
func TestFlows(t *testing.T) {
	flowtest.Run(t, func(t *testing.T) world.World {
		w, err := local.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	})
}
