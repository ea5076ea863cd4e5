package local_test

import (
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
	"github.com/lambdaworkflow/workflow/world/worldtest"
)

func TestConformance(t *testing.T) {
	worldtest.Run(t, func(t *testing.T) world.World { return open(t, t.TempDir()) })
}

func TestConformanceFullSync(t *testing.T) {
	worldtest.Run(t, func(t *testing.T) world.World { return open(t, t.TempDir(), local.WithFullSync()) })
}

// open opens a World in dir that the test closes when it ends.
func open(t testing.TB, dir string, opts ...local.Option) *local.World {
	t.Helper()
	w, err := local.Open(dir, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

func TestRetention(t *testing.T) {
	worldtest.Retention(t, func(t *testing.T, retention time.Duration, clock *worldtest.Clock) world.World {
		return open(t, t.TempDir(), local.WithRetention(retention), local.WithClock(clock))
	})
}
