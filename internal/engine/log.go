package engine

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Keys of the attributes on the engine's log lines. They are stable: log
// queries and alarms are written against them.
const (
	logRunID    = "run_id"
	logWorkflow = "workflow"
	logStep     = "step"
	logStepID   = "step_id"
	logAttempt  = "attempt"
	// logDeployment is the deployment of the invocation (Engine.Deployment),
	// not necessarily the one the run is pinned to.
	logDeployment = "deployment"
	// logEvents and logMaxEvents are a run's log length and its limit.
	logEvents    = "events"
	logMaxEvents = "max_events"
)

// newRunLogger is the logger of one invocation: the engine's, with the
// run's identity (and the deployment driving it) on every line.
func (e *Engine) newRunLogger(run world.Run) *slog.Logger {
	// One With, not two: each copies the handler's attributes, and every
	// delivery makes a logger.
	if e.Deployment != "" {
		return e.logger().With(logRunID, run.ID, logWorkflow, run.Workflow, logDeployment, e.Deployment)
	}
	return e.logger().With(logRunID, run.ID, logWorkflow, run.Workflow)
}

// logAt writes one line with the invocation's context, from which a
// handler may add what it knows about the invocation (a Lambda request ID).
func (inv *invocation) logAt(level slog.Level, msg string, args ...any) {
	inv.log.Log(inv.ctx, level, msg, args...)
}

// stepArgs are the attributes of a line about a step attempt.
func stepArgs(op *Op, attempt int) []any {
	return []any{logStep, op.Name, logStepID, op.ID(), logAttempt, attempt}
}

// logEnd reports the end of the run, once, by the invocation that applied
// its terminal event live (its own, or another writer's cancellation).
func (inv *invocation) logEnd(ev world.Event) {
	took := slog.Duration("duration", ev.CreatedAt.Sub(inv.run.CreatedAt))
	switch ev.Type {
	case world.RunCompleted:
		inv.logAt(slog.LevelInfo, "workflow: run completed", took)
	case world.RunContinued:
		p, _ := decodePayload[runContinuedPayload](ev)
		inv.logAt(slog.LevelInfo, "workflow: run continued as new", took, "successor", p.Successor)
	case world.RunCancelled:
		p, _ := decodePayload[runFinishedPayload](ev)
		inv.logAt(slog.LevelInfo, "workflow: run cancelled", took, "reason", p.Reason)
	case world.RunFailed:
		failure := inv.fatal
		if failure == nil {
			failure = inv.failure
		}
		msg := "workflow: run failed"
		if nd := (*Nondeterminism)(nil); errors.As(failure, &nd) {
			msg = "workflow: run failed: the workflow code no longer matches the run's log (nondeterminism)"
		}
		inv.logAt(slog.LevelError, msg, took, "err", failure)
	}
}

// logSuspend says what a suspending run waits for and until when it
// sleeps at the latest (a hook or a child can wake it sooner).
func (inv *invocation) logSuspend() {
	var waits []string
	seen := map[string]bool{}
	add := func(what string) {
		if !seen[what] {
			seen[what] = true
			waits = append(waits, what)
		}
	}
	for _, op := range inv.ops {
		if op.done || !op.buffered {
			continue
		}
		switch {
		case op.Kind == OpWait:
			add("sleep")
		case op.Kind == OpStep && !op.step.settled:
			add("step retry")
		case op.Kind == OpHook && op.created:
			add("hook")
		case op.Kind == OpChild:
			add("child run")
		}
	}
	args := []any{"waiting_for", strings.Join(waits, ", ")}
	if due := inv.nextDue(); !due.IsZero() {
		args = append(args, "until", due.UTC().Format(time.RFC3339Nano))
	}
	inv.logAt(slog.LevelInfo, "workflow: run suspended", args...)
}

// writtenByOthers reports whether an event type is written from outside
// the run's invocations: a hook resume, a child's result, a takeover or a
// cancellation.
func writtenByOthers(t world.EventType) bool {
	switch t {
	case world.HookReceived, world.ChildCompleted, world.HookConflict, world.RunCancelled:
		return true
	}
	return false
}

// lastSeen is the last slot of a log that an invocation had applied live:
// the last event an invocation wrote itself. Events after it came from
// outside and no workflow code has reacted to them yet, so the workflow's
// logger speaks while they replay (a hook's message is logged once, by the
// invocation it wakes).
func lastSeen(events []world.Event) int64 {
	for i := len(events) - 1; i >= 0; i-- {
		if !writtenByOthers(events[i].Type) {
			return events[i].Slot
		}
	}
	return 0
}

// quiet reports whether workflow code re-executes what it did before, so
// that its log lines were written then.
func (inv *invocation) quiet() bool {
	return inv.replay.quiet(inv.lastSlot.Load())
}

// replayAll makes the workflow's logger quiet for the whole log.
const replayAll = math.MaxInt64

// Logger is the logger of workflow code: the run's, silent while the code
// replays what it did before, so that each line is written once per real
// event (again only if an invocation crashed before recording it).
func (c *Ctx) Logger() *slog.Logger {
	return slog.New(&replayGate{inner: c.inv.log.Handler(), inv: c.inv})
}

// replayGate is the handler behind Ctx.Logger.
type replayGate struct {
	inner slog.Handler
	inv   *invocation
}

func (g *replayGate) Enabled(ctx context.Context, l slog.Level) bool {
	return !g.inv.quiet() && g.inner.Enabled(g.inv.ctx, l)
}

// Handle writes with the invocation's context: workflow code has none.
func (g *replayGate) Handle(_ context.Context, r slog.Record) error {
	return g.inner.Handle(g.inv.ctx, r)
}

func (g *replayGate) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &replayGate{inner: g.inner.WithAttrs(attrs), inv: g.inv}
}

func (g *replayGate) WithGroup(name string) slog.Handler {
	return &replayGate{inner: g.inner.WithGroup(name), inv: g.inv}
}
