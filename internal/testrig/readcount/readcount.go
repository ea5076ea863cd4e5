// Package readcount is a memory World that counts the runs read from it,
// for tests that lock in how many reads an operation makes.
package readcount

import (
	"context"
	"sync/atomic"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// World is a memory World that counts its GetRun calls. It keeps every
// interface the memory World implements.
type World struct {
	*memory.World
	gets atomic.Int64
}

// New returns an empty World.
func New() *World { return &World{World: memory.New()} }

// GetRun implements world.World, counting the call.
func (w *World) GetRun(ctx context.Context, id string) (world.Run, error) {
	w.gets.Add(1)
	return w.World.GetRun(ctx, id)
}

// Reads returns how many runs were read since the last call, and starts
// the count again.
func (w *World) Reads() int64 { return w.gets.Swap(0) }
