package memory_test

import (
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
	"github.com/lambdaworkflow/workflow/world/worldtest"
)

func TestConformance(t *testing.T) {
	worldtest.Run(t, func(*testing.T) world.World { return memory.New() })
}

// TestConformanceShared runs the suite on one World for all subtests, which
// checks that the suite itself keeps its subtests apart.
func TestConformanceShared(t *testing.T) {
	w := memory.New()
	worldtest.Run(t, func(*testing.T) world.World { return w })
}

func TestRetention(t *testing.T) {
	worldtest.Retention(t, func(_ *testing.T, retention time.Duration, clock *worldtest.Clock) world.World {
		return memory.New(memory.WithRetention(retention), memory.WithClock(clock))
	})
}
