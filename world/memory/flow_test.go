package memory_test

import (
	"testing"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
	"github.com/lambdaworkflow/workflow/world/worldtest/flowtest"
)

// TestFlows runs the end-to-end hook, reply, webhook and stream scenarios
// with a real worker, on a fresh World each and on one shared World.
func TestFlows(t *testing.T) {
	flowtest.Run(t, func(*testing.T) world.World { return memory.New() })
}

func TestFlowsShared(t *testing.T) {
	w := memory.New()
	flowtest.Run(t, func(*testing.T) world.World { return w })
}

// TestLongStepWorkers runs the mixed deployment, its long-step queue
// another World's queue.
func TestLongStepWorkers(t *testing.T) {
	flowtest.RunLongSteps(t, func(*testing.T) world.World { return memory.New() },
		func(*testing.T, world.World) world.Queue { return memory.New() })
}
