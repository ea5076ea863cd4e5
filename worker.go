package workflow

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// WorkerOptions configures a Worker. The zero value is ready to use.
type WorkerOptions struct {
	// Concurrency is how many runs the worker drives at once (default 64).
	// Steps of one run are not limited by it: a fan-out runs in parallel.
	Concurrency int
	// MaxEvents caps each run's event log (default 25,000); a run that
	// would exceed it fails with [ErrMaxEventsExceeded].
	MaxEvents int
	// InlineWait is the longest timer or retry delay a run waits out while
	// staying in memory (default 1 s); longer waits suspend the run.
	InlineWait time.Duration
	// MaxInvocation is the longest one invocation of a run may last, as a
	// Lambda function's timeout bounds each of its invocations: an
	// invocation whose context has no deadline gets one this far away,
	// and hands its run off to a fresh invocation shortly before it. A
	// step that declares (WithTimeout) more than a fresh invocation
	// allows fails at once with [ErrStepTooLong], unless LongStepQueue
	// is set. Zero (the default): a Worker's invocations are bounded only
	// by their context; on Lambda, by the function's timeout, which the
	// context's deadline gives.
	MaxInvocation time.Duration
	// LongStepQueue, if set, is where a worker whose invocations have a
	// time limit sends a run whose next step declares (WithTimeout) more
	// than any of them allows, instead of failing the step with
	// [ErrStepTooLong]: the queue of a Worker without a time limit (one
	// with Queue set to it, on any machine), which runs the step and
	// drives the run on. The run's later wake-ups come back to the
	// World's queue. Only Enqueue is called on it. See "Steps longer than
	// an invocation" in the package documentation.
	LongStepQueue world.Queue
	// Queue, if set, is the queue the worker takes its messages from
	// instead of the World's, such as another worker's LongStepQueue;
	// everything else (the runs, their logs, the wake-ups they queue)
	// stays on the World.
	Queue world.Queue
	// Visibility is how long a received message stays hidden from other
	// workers while it is processed (default 5 min).
	Visibility time.Duration
	// Registry is the workflows the worker runs (default: every workflow
	// defined in the binary). A run of a workflow it does not hold is left
	// for another worker: its message is delivered again.
	Registry *Registry
	// LeaseTTL is how long a run stays leased to a worker that stopped
	// renewing its lease (it crashed or stalled) before another worker may
	// take the run over (default 30 s). A live worker renews it every
	// third of that.
	LeaseTTL time.Duration
	// WarmRuns is how many suspended runs the worker keeps replayed in
	// memory, so that their next delivery reads and replays only the
	// events added since (default 128); WarmBytes bounds what they hold
	// (default 64 MiB). Negative: none, every delivery replays the whole
	// log. See docs/architecture/replay.md, "The warm cache".
	WarmRuns  int
	WarmBytes int64
	// Deployment names the code this worker runs. Each run is pinned to
	// the deployment that first executes it, and a worker of another
	// deployment never drives it: it puts the run's message back on the
	// queue, with a growing delay, for a worker of that deployment (the
	// Lambda adapter hands it to that function version instead). Default:
	// the binary's VCS revision (from debug.ReadBuildInfo), or a hash of
	// the executable where the build recorded none.
	//
	// Setting it also says the worker's Registry holds every workflow of
	// the deployment: a run the deployment must drive whose workflow the
	// registry lacks fails at once ("workflow "x" is not registered in
	// deployment y"). Left empty, such a run is left for another worker.
	Deployment string
	// StuckAfter is how long a run may be overdue with nothing moving it
	// (its message lost: see [Worker.CheckStuck]) before Run re-queues it,
	// and after as long again, fails it with [ErrRunStuck] (default 15
	// min). Run checks a third as often. Negative: Run never checks. It
	// should outlast Visibility, so that a failed delivery is retried
	// before its run counts as stuck.
	StuckAfter time.Duration
	// Codec encodes the payloads of the runs the worker starts (children,
	// successors) and decodes those of the runs it drives; see package
	// codec. A run keeps the scheme it was created with: a worker without
	// the run's key leaves its deliveries to be retried ("payload is
	// encrypted; no key for run ..."). Give the Client the same chain
	// (WithPayloadCodec).
	Codec *codec.Chain
	// Replace swaps steps for others, e.g. fakes in tests.
	Replace []StepReplacement
	// WebhookBaseURL is where the webhook route is served, e.g.
	// "https://example.com"; Webhook.URL builds on it.
	WebhookBaseURL string
	// Clock replaces time.Now (the test harness skips time with it).
	Clock func() time.Time
	// Logger receives the worker's log lines (default slog.Default()):
	// runs starting, suspending, resuming and ending at Info, step
	// attempts at Debug, retries at Warn, failures at Error, each with
	// run_id and workflow, and step, step_id and attempt for steps. The
	// context of each line is the invocation's (ctx of Process or Run), so
	// a handler can add what it carries, as the Lambda adapter adds
	// aws_request_id. Logger and StepLogger build on it.
	Logger *slog.Logger
	// DynamicWorkflows lets the worker execute the code stored with
	// dynamic runs (package dynamic), as WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS=1
	// does for the whole process. Off, such a run fails when it reaches
	// this worker. The code runs with the worker's privileges: see the
	// package's Security section.
	DynamicWorkflows bool
}

// Worker drives runs: it takes messages off the World's queue, replays
// each run's log and runs its steps.
type Worker struct {
	w *engine.Worker
}

// NewWorker returns a Worker on the given World for the workflows of
// opts.Registry, or of the binary.
func NewWorker(w world.World, opts WorkerOptions) *Worker {
	registry := engine.Global
	if opts.Registry != nil {
		registry = opts.Registry.r
	}
	e := &engine.Engine{
		World:      w,
		Registry:   registry,
		Errors:     errorModel,
		Now:        opts.Clock,
		MaxEvents:  opts.MaxEvents,
		InlineWait: opts.InlineWait,
		LeaseTTL:   opts.LeaseTTL,
		Logger:     opts.Logger,
		Codec:      opts.Codec,
		WarmRuns:   opts.WarmRuns,
		WarmBytes:  opts.WarmBytes,

		DynamicWorkflows: opts.DynamicWorkflows,

		MaxInvocation: opts.MaxInvocation,
		LongSteps:     opts.LongStepQueue,

		WebhookBaseURL: opts.WebhookBaseURL,
		Deployment:     cmp.Or(opts.Deployment, engine.DefaultDeployment()),
		OwnsDeployment: opts.Deployment != "",
	}
	if e.InlineWait == 0 {
		e.InlineWait = time.Second
	}
	if e.InlineWait < 0 {
		e.InlineWait = 0
	}
	if len(opts.Replace) > 0 {
		e.StepOverrides = map[string]engine.StepFunc{}
		for _, r := range opts.Replace {
			e.StepOverrides[r.name] = r.fn
		}
	}
	return &Worker{w: &engine.Worker{Engine: e, Queue: opts.Queue, Concurrency: cmpOr(opts.Concurrency, 64), Visibility: opts.Visibility,
		StuckAfter: cmp.Or(opts.StuckAfter, engine.DefaultStuckAfter)}}
}

func cmpOr(v, fallback int) int {
	if v > 0 {
		return v
	}
	return fallback
}

// Run processes runs until ctx is done, then waits for those in flight.
func (w *Worker) Run(ctx context.Context) error { return workerError(w.w.Serve(ctx)) }

// Process drives one run as far as it can go now. Serverless adapters call
// it for each queue message; it returns an error when the message should
// be delivered again.
func (w *Worker) Process(ctx context.Context, runID string) error {
	return workerError(w.w.Process(ctx, runID))
}

// Deployment returns the ID of the deployment the worker runs.
func (w *Worker) Deployment() string { return w.w.Engine.Deployment }

// Busy reports how many runs the worker is processing right now.
func (w *Worker) Busy() int { return w.w.Busy() }

// StepReplacement swaps a step's function, for tests. Make one with
// Step.Replace.
type StepReplacement struct {
	name string
	fn   engine.StepFunc
}

// Replace returns a StepReplacement that runs fn instead of the step's own
// function, with the same encoding, retries and recording.
func (s *Step[I, O]) Replace(fn func(ctx context.Context, input I) (O, error)) StepReplacement {
	return StepReplacement{name: s.def.Name, fn: wrapStep(s.def.Name, fn)}
}

// Handle processes one received message and acknowledges it unless it
// must be delivered again, in which case it returns the error.
func (w *Worker) Handle(ctx context.Context, d world.Delivery) error {
	return workerError(w.w.Handle(ctx, d))
}

// workerError gives a run pinned elsewhere the error type users match.
func workerError(err error) error {
	if pinned := (*engine.PinnedElsewhere)(nil); errors.As(err, &pinned) {
		return &PinnedError{RunID: pinned.RunID, Deployment: pinned.Deployment}
	}
	return err
}
