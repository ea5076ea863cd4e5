package aws

import (
	"testing"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/worldtest/flowtest"
)

// TestFlows runs the end-to-end hook, reply, webhook and stream scenarios
// with a real worker on the AWS World, each on fresh resources.
func TestFlows(t *testing.T) {
	emulatorConfig(t)
	flowtest.Run(t, func(t *testing.T) world.World { return newTestWorld(t) })
}
