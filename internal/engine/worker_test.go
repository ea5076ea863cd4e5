package engine

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// gatedReads is a World that counts run reads and holds the first one
// after gate is made until gate is closed. It hides the World's RunReader,
// so that every run read is a GetRun.
type gatedReads struct {
	world.World
	reads   atomic.Int64
	gate    chan struct{}
	entered chan struct{}
}

func (g *gatedReads) GetRun(ctx context.Context, id string) (world.Run, error) {
	if g.gate != nil && g.reads.Add(1) == 1 {
		close(g.entered)
		<-g.gate
	}
	return g.World.GetRun(ctx, id)
}

// Deliveries of one run that wait behind another delivery of it are done
// by the first of them to read the run: each arrived before that read.
func TestWaitingDeliveriesGoWithOneRead(t *testing.T) {
	ctx := context.Background()
	w := &gatedReads{World: newMemoryWorld(t)}
	e := newTestEngine(w, func(*Ctx, json.RawMessage) (json.RawMessage, error) { return mustJSON("done"), nil })
	worker := &Worker{Engine: e}
	startTestRun(t, w)
	if err := worker.Process(ctx, testRunID); err != nil {
		t.Fatal(err)
	}
	w.gate, w.entered = make(chan struct{}), make(chan struct{})
	const waiting = 3
	var wg sync.WaitGroup
	errs := make(chan error, waiting+1)
	wg.Go(func() { errs <- worker.Process(ctx, testRunID) }) // holds the lock, its read held at the gate
	<-w.entered
	for range waiting {
		wg.Go(func() { errs <- worker.Process(ctx, testRunID) })
	}
	for worker.locks.users(testRunID) < 1+waiting {
		time.Sleep(time.Millisecond) // until every delivery waits for the lock
	}
	close(w.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The held delivery's read began before the others arrived, so it
	// covers none of them; the first of them to take the lock covers the
	// rest.
	if n := w.reads.Load(); n != 2 {
		t.Errorf("%d deliveries made %d run reads, want 2", 1+waiting, n)
	}
}

// users reports how many callers hold or wait for runID's lock.
func (l *runLocks) users(runID string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rl := l.locks[runID]; rl != nil {
		return rl.users
	}
	return 0
}
