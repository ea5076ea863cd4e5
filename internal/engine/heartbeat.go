package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Heartbeats: a running attempt reports progress with Heartbeat. The
// latest details are kept in memory on every call; they reach the log
// (step_heartbeat, written with the invocation's next append, like a
// step_started) at most once per throttle period, and always with the
// step_retrying of an attempt that fails, so that the next attempt can
// resume from them. A step that declares a heartbeat timeout has an
// attempt that goes that long without a Heartbeat cancelled and failed
// with ErrHeartbeatTimeout: a hung attempt is found long before its
// step's timeout. (A dead worker is found by its run's lease, which it
// stops renewing, whatever the step declares.)

// DefaultHeartbeatThrottle is the least time between two heartbeats
// recorded in the log, for a step with no heartbeat timeout; with one, it
// is four fifths of the timeout.
const DefaultHeartbeatThrottle = 30 * time.Second

// ErrHeartbeatTimeout fails an attempt that sent no heartbeat within its
// step's heartbeat timeout. Users match it as workflow.ErrHeartbeatTimeout,
// the same value.
var ErrHeartbeatTimeout = errors.New("workflow: step attempt sent no heartbeat within its heartbeat timeout")

// beats is one running attempt's heartbeat state, shared by the step's
// goroutine (Heartbeat) and the invocation's loop.
type beats struct {
	// to is the invocation's channel as it was when the attempt started:
	// a step's goroutine may beat after the attempt ended and the
	// invocation parked (warm.go) and shed it.
	to       chan<- heartbeat
	op       *Op
	attempt  int
	throttle time.Duration

	mu       sync.Mutex
	details  json.RawMessage // the latest
	recorded time.Time       // when details last went to the loop for the log
	watchdog *time.Timer     // nil without a heartbeat timeout
	timeout  time.Duration
}

// heartbeat is a heartbeat on its way to the loop.
type heartbeat struct {
	op      *Op
	attempt int
	details json.RawMessage
}

func newBeats(inv *invocation, op *Op, def *StepDef) *beats {
	throttle := DefaultHeartbeatThrottle
	if def.HeartbeatTimeout > 0 {
		throttle = def.HeartbeatTimeout * 4 / 5
	}
	return &beats{to: inv.live.heartbeats, op: op, attempt: op.step.attempt, throttle: throttle, timeout: def.HeartbeatTimeout}
}

// Heartbeat records the progress of the step attempt ctx belongs to; it
// does nothing outside a step. Only the latest details are kept; they go
// to the log at most once per throttle period.
func Heartbeat(ctx context.Context, details json.RawMessage) {
	info, ok := StepInfoFrom(ctx)
	if !ok || info.beats == nil {
		return
	}
	b := info.beats
	b.mu.Lock()
	defer b.mu.Unlock()
	b.details = details
	if b.watchdog != nil {
		b.watchdog.Reset(b.timeout)
	}
	now := time.Now()
	if !b.recorded.IsZero() && now.Sub(b.recorded) < b.throttle {
		return
	}
	select {
	case b.to <- heartbeat{op: b.op, attempt: b.attempt, details: details}:
		b.recorded = now
	default:
		// The loop is behind (writing): the next call tries again.
	}
}

// latest is the attempt's last heartbeat details, nil if it sent none.
func (b *beats) latest() json.RawMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.details
}

// watch cancels ctx when the attempt goes the step's heartbeat timeout
// without a heartbeat; stop ends the watch.
func (b *beats) watch(ctx context.Context) (_ context.Context, stop func()) {
	if b.timeout <= 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	b.mu.Lock()
	b.watchdog = time.AfterFunc(b.timeout, func() {
		cancel(fmt.Errorf("%w (%s)", ErrHeartbeatTimeout, b.timeout))
	})
	b.mu.Unlock()
	return ctx, func() {
		b.mu.Lock()
		b.watchdog.Stop()
		b.mu.Unlock()
		cancel(nil)
	}
}

// recordHeartbeat buffers a heartbeat for the log, if its attempt still
// runs here and the step's start is buffered (a heartbeat that comes
// sooner is dropped; the attempt's next one is recorded).
func (inv *invocation) recordHeartbeat(hb heartbeat) {
	op := hb.op
	if op.done || op.step.settled || !op.step.running || op.step.attempt != hb.attempt || !op.buffered {
		return
	}
	inv.bufferStarted(op)
	inv.bufferEvent(world.StepHeartbeat, op.ID(), stepHeartbeatPayload{Attempt: hb.attempt, Details: hb.details})
}
