// Package engine is the replay engine: it rebuilds a run's state by
// re-executing its workflow against the run's event log, then drives the run
// forward, running steps inline, until it finishes or must wait.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// ErrorCodec turns errors into JSON and classifies step failures. The root
// package supplies it, because the error types users see live there.
type ErrorCodec interface {
	Encode(err error) json.RawMessage
	// Decode revives an error Encode wrote.
	Decode(raw json.RawMessage) error
	// Retry says whether a failed step attempt may be retried and, if the
	// error says so, after how long (zero: use the step's backoff).
	Retry(err error) (retry bool, after time.Duration)
}

// Engine drives runs of the workflows in its Registry on its World.
type Engine struct {
	// World is where the runs live. Set it before the engine's first use,
	// which finds its optional interfaces (capabilities.go), and leave it.
	World    world.World
	Registry *Registry
	Errors   ErrorCodec
	// Now is the clock; tests replace it to skip time.
	Now func() time.Time
	// MaxEvents caps a run's log; a run that would pass it fails.
	MaxEvents int
	// InlineWait is the longest timer or retry delay an invocation waits out
	// itself, keeping its coroutines alive, instead of suspending the run.
	InlineWait time.Duration
	// DeadlineMargin is how long before its context's deadline an
	// invocation stops taking new work and hands the run off.
	DeadlineMargin time.Duration
	// MaxInvocation is the longest an invocation lives (a Lambda
	// function's timeout): its context's deadline is at most this far
	// away. Zero: the deadline of an invocation's context bounds it, if
	// any, and every invocation is taken to live as long as the one at
	// hand (duration.go).
	MaxInvocation time.Duration
	// LongSteps, if set, is where a run goes whose next step fits no
	// invocation (duration.go): the queue of workers without a time
	// limit. Nil: such a step fails with ErrStepTooLong.
	LongSteps world.Queue
	// LeaseTTL is how long a run stays leased to an invocation that
	// stopped renewing (defaultLeaseTTL if zero).
	LeaseTTL time.Duration
	// WebhookBaseURL is where the public webhook route is served (e.g.
	// "https://example.com"); workflows build their webhooks' URLs on it.
	WebhookBaseURL string
	// StepOverrides replaces steps by name (the test harness mocks steps).
	StepOverrides map[string]StepFunc
	// Deployment identifies the code this engine runs. A run is pinned to
	// the deployment of its first execution, and an engine of another
	// deployment leaves it alone (PinnedElsewhere). Empty: runs are not
	// pinned.
	Deployment string
	// OwnsDeployment says the Registry holds every workflow of the
	// Deployment: a run this deployment must drive whose workflow it lacks
	// fails at once, as no other worker of the deployment can drive it.
	// Otherwise the run is left for a worker whose registry holds it.
	OwnsDeployment bool
	// Logger receives the engine's log lines (slog.Default() if nil).
	Logger *slog.Logger
	// DynamicWorkflows lets the engine execute dynamic runs' stored code
	// (as DynamicEnv does for the whole process).
	DynamicWorkflows bool
	// Codec encodes the payloads of the runs this engine starts (children,
	// successors) and decodes those of every run it drives (see seal.go).
	// Nil: runs are started plain, and a run with codecs is refused.
	Codec *codec.Chain

	// WarmRuns and WarmBytes bound the warm cache of suspended runs kept
	// replayed in memory (warm.go): defaultWarmRuns and defaultWarmBytes
	// if zero; negative keeps none.
	WarmRuns  int
	WarmBytes int64

	idle idleRuns
	warm warmCache

	capsOnce     sync.Once
	capabilities *capabilities // the World's optional interfaces; see caps
}

// DefaultMaxEvents is the per-run event ceiling unless configured.
const DefaultMaxEvents = 25_000

// Errors the engine reports in failed runs. Users match them as
// workflow.ErrMaxEventsExceeded and workflow.ErrUnknownWorkflow, the same
// values; the error codec revives them as themselves from a run's log.
var (
	ErrMaxEvents       = errors.New("workflow: run exceeded its event limit")
	ErrUnknownWorkflow = errors.New("workflow: unknown workflow")
)

// Nondeterminism describes a workflow whose calls no longer match its log.
type Nondeterminism struct {
	RunID    string
	Slot     int64  // the log position that disagrees
	Expected string // what the log recorded
	Found    string // what the workflow did instead
}

func (n *Nondeterminism) Error() string {
	return fmt.Sprintf("nondeterministic workflow: run %s, event %d: the log records %s, but the workflow %s",
		n.RunID, n.Slot, n.Expected, n.Found)
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}

func (e *Engine) maxEvents() int {
	if e.MaxEvents > 0 {
		return e.MaxEvents
	}
	return DefaultMaxEvents
}

// step returns what runs for a step the workflow called: the definition
// it called (so steps need no registry), or the test harness's
// replacement, which keeps the definition's retry policy.
func (e *Engine) step(def *StepDef) *StepDef {
	fn, mocked := e.StepOverrides[def.Name]
	if !mocked {
		return def
	}
	copied := *def
	copied.Fn = fn
	return &copied
}

// Process drives one run as far as it can go now. It returns an error only
// when the run must be processed again (a World failure); everything the
// run itself does, including failing, is recorded in its log.
//
// Only the invocation holding the run's lease reads the log and drives the
// run; one that finds the lease held by a live invocation defers its
// delivery to it (see deferToHolder).
func (e *Engine) Process(ctx context.Context, runID string) error {
	run, early, err := e.readRun(ctx, runID)
	if err != nil {
		return err
	}
	if run.Status == world.StatusQueued {
		return nil // waiting for a slot: the release that frees one queues it
	}
	if run.Inbox == 0 && e.idle.unchanged(runID, run.LastSlot) {
		return nil // nothing new since this process suspended the run, or saw its end through
	}
	if e.MaxInvocation > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.MaxInvocation)
		defer cancel()
	}
	warm := e.warm.take(runID)
	if warm != nil && (run.Status.Terminal() || !warm.fits(run)) {
		warm.sched.unwind() // parked: already ended
		warm = nil
	}
	inv := warm
	if inv != nil {
		inv.revive(ctx, run)
	} else if inv, err = e.freshInvocation(ctx, run); err != nil {
		return err
	}
	if run.Status.Terminal() {
		defer inv.close()
		events, err := inv.logAfter(0, early, run.LastSlot)
		if err != nil {
			return err
		}
		if err := inv.afterFinish(events); err != nil {
			return err
		}
		e.idle.mark(runID, run.LastSlot)
		return nil
	}
	err = e.processLeased(ctx, inv, warm != nil, early)
	if errors.Is(err, errWarmStale) {
		inv.close()
		if inv, err = e.freshInvocation(ctx, run); err != nil {
			return err
		}
		err = e.processLeased(ctx, inv, false, early)
	}
	e.park(inv, err)
	if err != nil && inv.leaseLost(err) {
		inv.logAt(slog.LevelWarn, "workflow: another invocation took the run over; this one stops")
		return nil
	}
	return err
}

// freshInvocation is a new invocation of run, with the run's codec open.
func (e *Engine) freshInvocation(ctx context.Context, run world.Run) (*invocation, error) {
	inv := newInvocation(ctx, e, run)
	var err error
	if inv.seal, err = e.openRun(ctx, run); err != nil {
		inv.close()
		return nil, err // another worker may hold the run's key
	}
	return inv, nil
}

// processLeased takes the run's lease, reads its log (only the tail after
// what a warm invocation has applied, if that checks out; what the early
// read did not cover, if there was one) and drives it.
func (e *Engine) processLeased(ctx context.Context, inv *invocation, warm bool, early *earlyLog) error {
	// The lease comes before the log is read, or is checked against the
	// read (readrun.go): a log read earlier could miss results its last
	// holder wrote before releasing it.
	if err := e.pinnedElsewhere(inv.run.ID, inv.run.Workflow, inv.run.Attributes[AttrDeployment]); err != nil {
		return err // before the lease: the run's own deployment may hold it
	}
	held, last, err := inv.acquireLease()
	if errors.Is(err, world.ErrLeaseHeld) {
		return inv.deferToHolder(held)
	}
	if err != nil {
		return err
	}
	defer func() { _, _ = inv.releaseLease(false) }() // on the error paths; drive releases on suspension
	inv.inbox.read = early.waiting()
	if warm {
		tail, err := inv.logAfter(inv.lastSlot.Load(), early, last)
		if err != nil {
			return err
		}
		if inv.tailFits(tail, inv.run.LastSlot) {
			inv.startInvocationSpan(ctx, tail)
			err = inv.driveWarm(tail)
			inv.endInvocationSpan(err)
			return err
		}
		inv.logAt(slog.LevelWarn, "workflow: the warm state of the run does not fit its log; replaying it all", "warm_slot", inv.lastSlot.Load(), "last_slot", inv.run.LastSlot)
		return errWarmStale
	}
	events, err := inv.logAfter(0, early, last)
	if err != nil {
		return err
	}
	inv.startInvocationSpan(ctx, events)
	err = inv.drive(events)
	inv.endInvocationSpan(err)
	return err
}
