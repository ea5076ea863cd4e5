package local_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
	"github.com/lambdaworkflow/workflow/world/worldtest/flowtest"
)

// readSpy is the embedded World running after (once) right after a
// ReadRun, before the invocation that read asks for the lease.
type readSpy struct {
	*local.World
	once  sync.Once
	after func()
}

func (w *readSpy) ReadRun(ctx context.Context, id string, after int64) (world.Run, []world.Event, []world.InboxMessage, bool, error) {
	run, events, inbox, complete, err := w.World.ReadRun(ctx, id, after)
	w.once.Do(w.after)
	return run, events, inbox, complete, err
}

// A run started in the World that serves the queue is read from memory,
// as it was at its start; another process that runs its step (and waits
// on its hook) between that read and the lease is not missed: the lease
// reports the slots it wrote, and the step is not run again.
func TestAnInvocationOvertakenAfterItsReadRunsNoStepTwice(t *testing.T) {
	for name, opts := range map[string][]local.Option{"default": nil, "full sync": {local.WithFullSync()}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w := open(t, dir, opts...)
			serve, served := context.WithTimeout(t.Context(), 10*time.Millisecond)
			if _, err := w.Receive(serve, time.Minute); err == nil {
				t.Fatal("received a message from an empty queue")
			}
			served() // the World serves its directory's queue now, as a worker's does
			flowtest.RunOvertaking(t, flowtest.Overtaking{
				World:  w,
				Reader: func(after func()) world.World { return &readSpy{World: w, after: after} },
				Other:  open(t, dir, opts...), // another process on the same directory
			})
		})
	}
}
