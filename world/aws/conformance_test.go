package aws

import (
	"testing"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/worldtest"
)

// TestConformance runs the shared suite, each subtest on fresh resources:
// queue subtests must not see each other's messages.
func TestConformance(t *testing.T) {
	emulatorConfig(t) // skip once, not in every subtest
	worldtest.Run(t, func(t *testing.T) world.World { return newTestWorld(t) })
}

// TestPushConformance runs the push rules on two Worlds sharing resources
// and an Event API.
func TestPushConformance(t *testing.T) {
	emulatorConfig(t)
	worldtest.RunPush(t, func(t *testing.T) (world.World, world.World) { return newPushWorlds(t) })
}
