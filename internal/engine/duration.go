package engine

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// The duration rules. An invocation with a deadline (a Lambda
// invocation's, or WorkerOptions.MaxInvocation's) has a time budget: its
// deadline less a margin for writing what it did and handing the run off.
// A step's declared timeout (StepDef.Timeout) is how long its attempt may
// take, so an attempt is started only where it fits in what is left of
// the budget. One that does not fit here but would fit a fresh invocation
// is handed off: the run goes to a fresh invocation, one queue message,
// and the attempt starts there with a whole budget. One that fits no
// invocation goes to Engine.LongSteps, the queue of workers without a
// time limit, or, where there is none, fails at once (ErrStepTooLong)
// instead of being handed from invocation to invocation for ever. An attempt that was running when its
// invocation ended (its step_started is in the log, its result is not)
// counts as a failed attempt under the step's retry policy, so that even a
// step with no declared timeout, killed at every deadline, ends.

// ErrStepTooLong fails a step whose declared timeout is longer than any
// invocation's budget. Users match it as workflow.ErrStepTooLong, the same
// value.
var ErrStepTooLong = errors.New("workflow: step declares a timeout longer than any invocation of this worker allows")

// ErrInterrupted is the error of an attempt whose invocation ended before
// it reported. Users match it as workflow.ErrAttemptInterrupted, the same
// value.
var ErrInterrupted = errors.New("workflow: step attempt interrupted: its invocation ended before it reported")

// placement says where a step's next attempt may start.
type placement int

const (
	runHere     placement = iota
	handOff               // in a fresh invocation: too little time is left here
	fitsNowhere           // in no invocation: the step declares more than a whole budget
)

// budget is the invocation's time budget: when it must stop starting work
// (its deadline less the margin) and how long a fresh invocation's budget
// is. A fresh invocation lives Engine.MaxInvocation, or, if that is not
// set, as long as this one (from the moment it opened to its deadline:
// Lambda gives every invocation of a function the same timeout). ok is
// false when the invocation has no deadline.
func (inv *invocation) budget() (end time.Time, whole time.Duration, ok bool) {
	deadline, ok := inv.ctx.Deadline()
	if !ok {
		return time.Time{}, 0, false
	}
	life := cmp.Or(inv.e.MaxInvocation, deadline.Sub(inv.openedAt))
	margin := inv.e.margin(life)
	return deadline.Add(-margin), life - margin, true
}

// margin is how long before its deadline an invocation that lives life
// stops taking work: DeadlineMargin, or a tenth of its life between 1 s
// and 30 s.
func (e *Engine) margin(life time.Duration) time.Duration {
	if e.DeadlineMargin > 0 {
		return e.DeadlineMargin
	}
	return min(max(life/10, time.Second), 30*time.Second)
}

// place decides where the step's next attempt may start. A step without
// a declared timeout starts anywhere: its attempt is interrupted at the
// deadline if it runs that long.
func (inv *invocation) place(def *StepDef) placement {
	if def.Timeout <= 0 {
		return runHere
	}
	end, whole, ok := inv.budget()
	switch {
	case !ok:
		return runHere
	case def.Timeout > whole-inv.toGoLive():
		// A fresh invocation would replay the run first, as this one
		// did: handing off to one that cannot fit the step either would
		// hand off for ever.
		return fitsNowhere
	case def.Timeout > time.Until(end):
		return handOff
	}
	return runHere
}

// toGoLive is how long the invocation took from opening to driving the
// run live (its lease, its log read, its replay), as a fresh one would.
func (inv *invocation) toGoLive() time.Duration {
	if inv.liveAt.IsZero() {
		return time.Since(inv.openedAt)
	}
	return inv.liveAt.Sub(inv.openedAt)
}

// attemptDeadline is when an attempt starting now must be over by: the
// invocation's budget or the step's timeout, whichever comes first; zero
// if neither bounds it.
func (inv *invocation) attemptDeadline(def *StepDef) time.Time {
	end, _, ok := inv.budget()
	if def.Timeout > 0 {
		if byTimeout := time.Now().Add(def.Timeout); !ok || byTimeout.Before(end) {
			return byTimeout
		}
	}
	return end
}

// failTooLong fails a step that fits in no invocation, saying what to do.
func (inv *invocation) failTooLong(op *Op, def *StepDef) {
	_, whole, _ := inv.budget()
	err := fmt.Errorf("step %q: %w: it declares %s, an invocation's budget is %s (its time limit less a margin for handing off), "+
		"%s of it taken to replay the run: split the step into shorter ones, or set WorkerOptions.LongStepQueue "+
		"(on Lambda, the stack's LongStepQueue) and serve that queue with a Worker outside Lambda, which has no time limit",
		op.Name, ErrStepTooLong, def.Timeout, whole.Round(time.Millisecond), inv.toGoLive().Round(time.Millisecond))
	op.step.settled = true
	inv.bufferEvent(world.StepFailed, op.ID(), stepFailedPayload{Attempt: op.step.attempt, Error: inv.e.Errors.Encode(err)})
	inv.logAt(slog.LevelError, "workflow: step fits in no invocation; failed it", append(stepArgs(op, op.step.attempt), "err", err)...)
}

// abandonRunning records the attempts in flight as failed when the
// invocation's time runs out: each counts under its step's retry policy
// (a step that outlasts every invocation ends), and is retried at once,
// in the fresh invocation the run is handed to. Their results, if they
// still come, are dropped.
func (inv *invocation) abandonRunning() {
	_, whole, _ := inv.budget()
	for _, op := range inv.ops {
		if op.Kind != OpStep || !op.step.running || op.done {
			continue
		}
		if !op.buffered { // started where it was issued, never materialized
			inv.bufferStepCreated(op)
			op.buffered = true
		}
		inv.bufferStarted(op)
		err := fmt.Errorf("step %q: attempt %d: %w: its invocation's budget (%s) ran out while it ran; "+
			"a step that may run that long should declare its duration with WithTimeout", op.Name, op.step.attempt, ErrInterrupted, whole.Round(time.Millisecond))
		inv.recordStepResult(stepResult{op: op, attempt: op.step.attempt, err: err, retryNow: true, heartbeat: op.step.beats.latest()})
	}
}

// interrupted records the attempt the log started that never reported as
// failed, under the step's retry policy: its invocation is gone (it
// crashed, ran out of time, was stopped by the platform, or stalled past
// its lease), since this one holds the run's lease only once that
// invocation released it or let it lapse.
func (inv *invocation) interrupted(op *Op) {
	why := "its invocation ended before it reported (a crash, or a worker that stalled past its lease)"
	if !op.step.deadline.IsZero() && !time.Now().Before(op.step.deadline) {
		why = fmt.Sprintf("it was still running at its deadline %s (its invocation ran out of time, or the platform stopped it): "+
			"declare the step's duration with WithTimeout so that it starts only where it fits", op.step.deadline.UTC().Format(time.RFC3339))
	}
	op.step.open = false
	inv.recordStepResult(stepResult{op: op, attempt: op.step.attempt,
		err: fmt.Errorf("step %q: attempt %d: %w: %s", op.Name, op.step.attempt, ErrInterrupted, why)})
}
