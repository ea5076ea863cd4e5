package local_test

import (
	"testing"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
	"github.com/lambdaworkflow/workflow/world/worldtest/flowtest"
)

// TestFlows runs the end-to-end hook, reply, webhook and stream scenarios
// with a real worker on the embedded World, one directory per scenario,
// with default settings and with full sync.
func TestFlows(t *testing.T) {
	for name, opts := range map[string][]local.Option{"default": nil, "full sync": {local.WithFullSync()}} {
		t.Run(name, func(t *testing.T) {
			flowtest.Run(t, func(t *testing.T) world.World { return open(t, t.TempDir(), opts...) })
		})
	}
}

// TestLongStepWorkers runs the mixed deployment, its long-step queue that
// of an embedded World in a directory of its own.
func TestLongStepWorkers(t *testing.T) {
	flowtest.RunLongSteps(t, func(t *testing.T) world.World { return open(t, t.TempDir()) },
		func(t *testing.T, _ world.World) world.Queue { return open(t, t.TempDir()) })
}
