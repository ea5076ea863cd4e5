package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// StepInfo describes the step attempt a context belongs to.
type StepInfo struct {
	RunID   string
	StepID  string // the step's correlation ID within the run
	Name    string
	Attempt int // 1 on the first attempt
	World   world.World
	// Logger is the run's logger with the step's attributes.
	Logger *slog.Logger
	// Now is the engine's clock, for steps that write to other runs' logs.
	Now func() time.Time
	// Codec encodes what the step writes to the run's streams; nil for a
	// plain run.
	Codec *codec.Run
	// LastHeartbeat is the last heartbeat details an earlier attempt of
	// the step recorded, nil if none did.
	LastHeartbeat json.RawMessage

	beats *beats // this attempt's heartbeats
}

type stepInfoKey struct{}

// StepInfoFrom returns the step attempt ctx belongs to, if any.
func StepInfoFrom(ctx context.Context) (StepInfo, bool) {
	info, ok := ctx.Value(stepInfoKey{}).(StepInfo)
	return info, ok
}

type stepResult struct {
	op      *Op
	attempt int
	output  json.RawMessage
	err     error
	took    time.Duration
	span    trace.Span
	// heartbeat is the attempt's last heartbeat details, recorded with
	// its retry.
	heartbeat json.RawMessage
	// retryNow: retry without the step's backoff (an attempt this
	// invocation abandoned because its time ran out).
	retryNow bool
}

// launch starts the next attempt of a step on its own goroutine. The
// attempt's step_started event is only buffered: the step does not wait for
// the log, so a crash may run an attempt the log never saw (at least once).
func (inv *invocation) launch(op *Op) {
	def := inv.e.step(op.step.def)
	if op.step.open {
		// The last attempt never reported: it counts as failed, so that a
		// step that kills its worker (or outlives every invocation) ends.
		inv.interrupted(op)
		return
	}
	switch inv.place(def) {
	case fitsNowhere:
		if inv.e.LongSteps == nil {
			inv.failTooLong(op, def)
			return
		}
		// A worker without a time limit runs it: hand the run to its
		// queue once the steps in flight are done.
		inv.live.fresh, inv.live.longStep = true, true
		return
	case handOff:
		inv.live.fresh = true
		return
	}
	inv.startAttempt(op, def)
	inv.bufferStarted(op)
}

// launchAtIssue starts a new step's first attempt where the workflow
// issues it, instead of when the workflow next blocks: a fan-out's first
// branch then does not wait for the code to issue the other branches. It
// does so only for a step beyond the log (no recorded event is ahead of
// the replay) of an invocation that drives the run and holds its lease
// (its context is cancelled once the lease is lost), the only one allowed
// to run attempts. Its step_created and step_started
// are buffered later, in issue order, by materialize (or finish): the log
// is the same as with a lazy start, and nothing is written for it until
// its result.
func (inv *invocation) launchAtIssue(op *Op) {
	def := inv.e.step(op.step.def)
	if !inv.driving || inv.replay.ahead > 0 || inv.fatal != nil || inv.terminal || !inv.lease.held || inv.ctx.Err() != nil || inv.place(def) != runHere {
		return // the loop's materialize decides
	}
	inv.startAttempt(op, def)
	if inv.live.running == 1 {
		// The only attempt in flight (a fan-out's first branch, a
		// sequential step): let it start now rather than after the
		// rest of the workflow's pass.
		runtime.Gosched()
	}
}

// startAttempt runs the step's next attempt on its own goroutine. Its
// step_started is owed until bufferStarted.
func (inv *invocation) startAttempt(op *Op, def *StepDef) {
	op.step.attempt++
	op.step.running = true
	op.step.startedAt = inv.e.now()
	op.step.deadlineAt = inv.attemptDeadline(def)
	inv.live.running++
	inv.logAt(slog.LevelDebug, "workflow: step attempt started", stepArgs(op, op.step.attempt)...)
	beats := newBeats(inv, op, def)
	op.step.beats = beats
	info := StepInfo{RunID: inv.run.ID, StepID: op.ID(), Name: op.Name, Attempt: op.step.attempt, World: inv.e.World, Now: inv.e.now, Codec: inv.seal,
		Logger: inv.log.With(stepArgs(op, op.step.attempt)...), LastHeartbeat: op.step.heartbeat, beats: beats}
	ctx, span := inv.startStepSpan(context.WithValue(inv.ctx, stepInfoKey{}, info), op, op.step.attempt)
	go func(attempt int, input json.RawMessage) {
		began := time.Now()
		out, err := callStep(ctx, def, beats, input)
		r := stepResult{op: op, attempt: attempt, output: out, err: err, took: time.Since(began), span: span, heartbeat: beats.latest()}
		select {
		case inv.live.results <- r:
		case <-inv.live.closed:
			inv.endStepSpan(r, "abandoned")
		}
	}(op.step.attempt, op.input)
}

// bufferStarted buffers the step_started an attempt owes, stamped when the
// attempt started.
func (inv *invocation) bufferStarted(op *Op) {
	if op.step.startedAt.IsZero() {
		return
	}
	inv.out.pending = append(inv.out.pending, newPending(world.StepStarted, op.ID(), stepStartedPayload{Attempt: op.step.attempt, Deadline: op.step.deadlineAt}, op.step.startedAt))
	op.step.startedAt, op.step.deadlineAt = time.Time{}, time.Time{}
}

// callStep runs one attempt; a panic becomes the attempt's error, and so
// does a missed heartbeat.
func callStep(ctx context.Context, def *StepDef, beats *beats, input json.RawMessage) (out json.RawMessage, err error) {
	if def.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, def.Timeout)
		defer cancel()
	}
	ctx, stop := beats.watch(ctx)
	defer stop()
	defer func() {
		if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrHeartbeatTimeout) {
			err = cause
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	return def.Fn(ctx, input)
}

// PanicError is a panic recovered from a step.
type PanicError struct {
	Value string
	Stack string
}

func (p *PanicError) Error() string { return "panic: " + p.Value }

// recordStepResult buffers the outcome of an attempt: a result, a retry
// with its time, or the step's final failure.
func (inv *invocation) recordStepResult(r stepResult) {
	op := r.op
	op.step.running, op.step.open = false, false
	if op.done || r.attempt != op.step.attempt {
		inv.endStepSpan(r, "abandoned")
		return
	}
	if r.err == nil {
		inv.endStepSpan(r, "completed")
		op.step.settled = true
		inv.bufferEvent(world.StepCompleted, op.ID(), stepCompletedPayload{Output: r.output})
		inv.logAt(slog.LevelDebug, "workflow: step completed", stepArgs(op, r.attempt)...)
		return
	}
	def := op.step.def
	encoded := inv.e.Errors.Encode(r.err)
	retry, after := inv.e.Errors.Retry(r.err)
	if !retry || r.attempt > def.MaxRetries {
		inv.endStepSpan(r, "failed")
		op.step.settled = true
		inv.bufferEvent(world.StepFailed, op.ID(), stepFailedPayload{Attempt: r.attempt, Error: encoded})
		why := "workflow: step failed; the error is not retryable"
		if retry {
			why = "workflow: step failed; no retries left"
		}
		inv.logAt(slog.LevelError, why, append(stepArgs(op, r.attempt), "err", r.err)...)
		return
	}
	if after <= 0 && def.Backoff != nil && !r.retryNow {
		after = def.Backoff(r.attempt)
	}
	inv.endStepSpan(r, "retrying")
	op.step.retryAt = inv.e.now().Add(after)
	inv.bufferEvent(world.StepRetrying, op.ID(), stepFailedPayload{Attempt: r.attempt, Error: encoded, RetryAt: op.step.retryAt, Heartbeat: r.heartbeat})
	inv.logAt(slog.LevelWarn, "workflow: step attempt failed; retrying",
		append(stepArgs(op, r.attempt), "err", r.err, "retry_at", op.step.retryAt.UTC().Format(time.RFC3339Nano))...)
}
