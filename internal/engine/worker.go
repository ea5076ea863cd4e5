package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Worker takes messages off the World's queue, or off Queue, and
// processes their runs.
type Worker struct {
	Engine *Engine
	// Queue, if set, is where the worker receives its messages instead of
	// the World's queue (a long-step queue, duration.go); the runs it
	// drives queue their wake-ups on the World's as always.
	Queue world.Queue
	// Concurrency is how many runs are processed at once.
	Concurrency int
	// Visibility hides a received message from other workers; it must
	// outlast an invocation, or another worker starts the run twice
	// (harmless, but wasted work).
	Visibility time.Duration
	// StuckAfter is the threshold of the stuck-run check (stuck.go), which
	// Serve runs every third of it; negative: Serve does not check.
	StuckAfter time.Duration

	locks runLocks // one invocation per run in this process
	// inflight counts deliveries being handled; the test harness reads it
	// to know when the system is idle.
	inflight sync.WaitGroup
	busy     atomic.Int64
}

// Serve processes messages until ctx is done.
func (w *Worker) Serve(ctx context.Context) error {
	n := max(w.Concurrency, 1)
	sem := make(chan struct{}, n)
	failing := world.NewPace(1) // spaces receives while the queue fails
	defer w.Engine.DropWarm()   // after the last delivery: no parked coroutine outlives the worker
	var checks sync.WaitGroup
	defer checks.Wait()
	if w.StuckAfter > 0 {
		checks.Go(func() { w.checkStuckPeriodically(ctx) })
	}
	for {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			w.inflight.Wait()
			return nil
		}
		d, err := w.queue().Receive(ctx, w.visibility())
		if err != nil {
			<-sem
			if ctx.Err() != nil {
				w.inflight.Wait()
				return nil
			}
			w.Engine.logger().Error("workflow: receive failed", "err", err)
			_ = failing.Pause(ctx) // ctx done: the loop's next select returns
			continue
		}
		failing.Progress()
		if ctx.Err() != nil {
			// Stopped while taking it (a World may hand a visible message
			// over on a done context): the message goes to another worker
			// now; this one, stopped, starts no more work.
			<-sem
			w.release(ctx, d)
			w.inflight.Wait()
			return nil
		}
		w.inflight.Add(1)
		w.busy.Add(1)
		go func() {
			defer func() { <-sem; w.busy.Add(-1); w.inflight.Done() }()
			w.Handle(ctx, d)
		}()
	}
}

// checkStuckPeriodically runs the stuck-run check every third of its
// threshold until ctx is done, so that a run that lost its message moves
// again within StuckAfter and a third.
func (w *Worker) checkStuckPeriodically(ctx context.Context) {
	tick := time.NewTicker(w.StuckAfter / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := w.Engine.CheckStuck(ctx, w.StuckAfter); err != nil && ctx.Err() == nil {
			w.Engine.logger().Warn("workflow: checking for stuck runs failed; the next check tries again", "err", err)
		}
	}
}

// queue is where the worker's messages come from.
func (w *Worker) queue() world.Queue {
	if w.Queue != nil {
		return w.Queue
	}
	return w.Engine.World
}

func (w *Worker) visibility() time.Duration {
	if w.Visibility > 0 {
		return w.Visibility
	}
	return 5 * time.Minute
}

// Handle processes one delivery and acknowledges it unless the run must be
// processed again. It returns the processing error, if any.
func (w *Worker) Handle(ctx context.Context, d world.Delivery) error {
	ctx = WithTraceParent(ctx, d.Trace)
	RecordQueueLag(ctx, d.Message, time.Time{}, w.Engine.now())
	err := w.Process(ctx, d.RunID)
	if errors.Is(err, world.ErrRunNotFound) {
		err = nil // nothing will ever make this message useful
	}
	if pinned := (*PinnedElsewhere)(nil); errors.As(err, &pinned) {
		return w.leaveForDeployment(ctx, d, pinned)
	}
	if err != nil && ctx.Err() != nil {
		// Shutting down, nothing failed: hand the message to another worker
		// now rather than after its visibility timeout.
		w.release(ctx, d)
		return err
	}
	if err != nil {
		w.Engine.logger().Error("workflow: processing run failed; it will be retried", logRunID, d.RunID, "attempt", d.Attempt, "err", err)
		return err
	}
	return w.queue().Ack(ctx, d)
}

// release makes d visible again on a context that outlives ctx, the
// stopping worker's; if it fails, the message comes back when its
// visibility timeout lapses, as it always could.
func (w *Worker) release(ctx context.Context, d world.Delivery) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := w.queue().Release(ctx, d); err != nil {
		w.Engine.logger().Warn("workflow: releasing a message failed; it returns after its visibility timeout", logRunID, d.RunID, "err", err)
	}
}

// Process drives one run, never two invocations of it at once in this
// process. It does not touch the queue.
//
// A delivery that waited here behind others of its run is done, without a
// read of its own, once one of them that began after it arrived returned
// without error: that one read the run after this delivery's event was
// written, so it drove the run as far as this one could. The wake-ups a
// burst of resumes left waiting here while an invocation drove the run go
// with one read, not one each.
func (w *Worker) Process(ctx context.Context, runID string) error {
	rl, arrived, unlock := w.locks.lock(runID)
	defer unlock()
	if rl.covered.Load() > arrived {
		return nil
	}
	n := rl.begun.Add(1)
	err := w.Engine.Process(ctx, runID)
	if err == nil {
		rl.covered.Store(n)
	}
	return err
}

// Busy reports how many deliveries are being handled right now.
func (w *Worker) Busy() int { return int(w.busy.Load()) }

// runLocks serialises invocations of the same run within a process. Entries
// are removed when unused, so the map holds only runs in flight.
type runLocks struct {
	mu    sync.Mutex
	locks map[string]*runLock
}

type runLock struct {
	sync.Mutex
	users int
	// begun numbers the Process calls that began under the lock; covered
	// is the number of the latest that returned without error.
	begun, covered atomic.Int64
}

// lock waits for runID's lock and returns it, with how many Process calls
// of the run had begun when this caller arrived.
func (l *runLocks) lock(runID string) (rl *runLock, arrived int64, unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*runLock{}
	}
	rl = l.locks[runID]
	if rl == nil {
		rl = &runLock{}
		l.locks[runID] = rl
	}
	rl.users++
	arrived = rl.begun.Load()
	l.mu.Unlock()
	rl.Lock()
	return rl, arrived, func() {
		rl.Unlock()
		l.mu.Lock()
		if rl.users--; rl.users == 0 {
			delete(l.locks, runID)
		}
		l.mu.Unlock()
	}
}
