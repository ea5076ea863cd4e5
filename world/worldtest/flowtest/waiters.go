package flowtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/waitrate"
	"github.com/lambdaworkflow/workflow/world"
)

// waiterScenarios: a caller waiting on a run (its result, its stream, a
// reply), sleeping or busy, through a World that cannot notify makes at
// most maxWaitRate requests a second after its first second. The caller's
// World is the scenario's seen through readCounter, which counts the
// reads and hides any Notifier, so every World is held to the pacing of
// one that cannot notify. One scenario a waiter, each with its own worker.
func waiterScenarios() []scenario {
	const (
		nap         = 4 * time.Second // two seconds measured, after the first
		maxWaitRate = 5.0
	)
	var out []scenario
	for _, k := range append(waitrate.Kinds, waitrate.BusyKinds...) {
		out = append(out, scenario{"WaiterBacksOff/" + k.Name, func(t *testing.T, e *env) {
			caller := &readCounter{World: e.world}
			rate, err := waitrate.Rate(e.ctx, k, workflow.NewClient(caller), caller, nap)
			if err != nil {
				t.Fatal(err)
			}
			if rate > maxWaitRate {
				t.Errorf("a caller waiting for the %s made %.0f requests a second after its first second, want at most %.0f", k.Name, rate, maxWaitRate)
			}
		}})
	}
	return out
}

// readCounter counts the reads made through it: what a waiter asks of a
// World. It implements waitrate.Counter.
type readCounter struct {
	world.World
	reads atomic.Int64
}

func (c *readCounter) Calls() map[string]int64 { return map[string]int64{"reads": c.reads.Load()} }
func (c *readCounter) ResetCalls()             { c.reads.Store(0) }

func (c *readCounter) GetRun(ctx context.Context, id string) (world.Run, error) {
	c.reads.Add(1)
	return c.World.GetRun(ctx, id)
}

func (c *readCounter) ListRuns(ctx context.Context, f world.RunFilter) (world.RunPage, error) {
	c.reads.Add(1)
	return c.World.ListRuns(ctx, f)
}

func (c *readCounter) Events(ctx context.Context, runID string, after int64) ([]world.Event, error) {
	c.reads.Add(1)
	return c.World.Events(ctx, runID, after)
}

func (c *readCounter) GetHook(ctx context.Context, token string) (world.Hook, error) {
	c.reads.Add(1)
	return c.World.GetHook(ctx, token)
}

func (c *readCounter) ReadStream(ctx context.Context, name string, from int64) ([][]byte, bool, error) {
	c.reads.Add(1)
	return c.World.ReadStream(ctx, name, from)
}
