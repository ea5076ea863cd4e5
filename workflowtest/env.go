// Package workflowtest runs workflows in-process, against an in-memory
// World, with a clock that skips time: a 30-day sleep completes at once.
// Steps can be replaced by fakes, hooks resumed, and the event log read;
// logs kept from earlier runs are replayed against today's code with
// Replay and ReplayFile.
//
//	env := workflowtest.New(t, workflowtest.Replace(Charge.Replace(fakeCharge)))
//	run := workflowtest.Start(env, Checkout, order)
//	receipt, err := run.Result() // drives the run, skipping sleeps
//
// The environment processes queue messages on the calling goroutine, one
// run at a time, so a test reads as a sequence: start, drive until idle,
// resume a hook, drive again. Steps of one run still run in parallel.
package workflowtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/timeline"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// Env is one isolated test environment.
type Env struct {
	t      testing.TB
	World  *memory.World
	Client *workflow.Client
	worker *workflow.Worker
	clock  *Clock
}

// Option configures New.
type Option func(*config)

type config struct {
	replace   []workflow.StepReplacement
	maxEvents int
	start     time.Time
}

// Replace swaps steps for fakes (see workflow.Step.Replace).
func Replace(r ...workflow.StepReplacement) Option {
	return func(c *config) { c.replace = append(c.replace, r...) }
}

// MaxEvents sets the per-run event limit.
func MaxEvents(n int) Option { return func(c *config) { c.maxEvents = n } }

// StartTime sets the fake clock's start (default: the real time now).
func StartTime(t time.Time) Option { return func(c *config) { c.start = t } }

// New returns an environment whose fake clock starts at the current time.
func New(t testing.TB, opts ...Option) *Env {
	cfg := config{start: time.Now()}
	for _, o := range opts {
		o(&cfg)
	}
	clock := &Clock{now: cfg.start}
	w := memory.New(memory.WithClock(clock))
	clock.poke = w.Poke
	env := &Env{
		t:      t,
		World:  w,
		Client: workflow.NewClient(w, clientOptions(cfg, clock)...),
		clock:  clock,
		worker: workflow.NewWorker(w, workflow.WorkerOptions{
			Replace:    cfg.replace,
			MaxEvents:  cfg.maxEvents,
			InlineWait: -1, // every timer suspends, so the clock can skip it
			// Every resume replays the whole log, so that code which does
			// not replay as it ran fails its tests.
			WarmRuns: -1,
			Clock:    clock.Now,
		}),
	}
	return env
}

// clientOptions gives the environment's client its clock and, if set,
// the workers' event limit, so that resumes keep to it too.
func clientOptions(cfg config, clock *Clock) []workflow.ClientOption {
	opts := []workflow.ClientOption{workflow.WithClock(clock.Now)}
	if cfg.maxEvents > 0 {
		opts = append(opts, workflow.WithMaxEvents(cfg.maxEvents))
	}
	return opts
}

// Now returns the fake clock's time.
func (e *Env) Now() time.Time { return e.clock.Now() }

// Advance moves the fake clock forward and processes what fell due.
func (e *Env) Advance(d time.Duration) {
	e.clock.set(e.clock.Now().Add(d))
	e.RunUntilIdle()
}

// RunUntilIdle processes every message that is due now, without moving
// the clock, until none is left.
func (e *Env) RunUntilIdle() {
	e.t.Helper()
	for {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Receive returns a due message or fails at once
		d, err := e.World.Receive(ctx, time.Hour)
		if err != nil {
			return
		}
		if err := e.worker.Handle(context.Background(), d); err != nil {
			e.t.Fatalf("workflowtest: processing run %s: %v", d.RunID, err)
		}
	}
}

// drive processes messages and skips time until done reports true. It
// fails if nothing more can happen (the run waits on something outside).
func (e *Env) drive(done func() bool) error {
	for {
		e.RunUntilIdle()
		if done() {
			return nil
		}
		next, ok := e.World.NextDue()
		if !ok {
			return errBlocked
		}
		if next.After(e.clock.Now()) {
			e.clock.set(next)
		}
	}
}

var errBlocked = errors.New("workflowtest: nothing left to run: the run waits for a hook or another outside event")

// Events returns a run's event log.
func (e *Env) Events(runID string) []world.Event {
	evs, err := e.World.Events(context.Background(), runID, 0)
	if err != nil {
		e.t.Fatalf("workflowtest: events of %s: %v", runID, err)
	}
	return evs
}

// Timeline renders a run's event log for a test failure message.
func (e *Env) Timeline(runID string) string { return timeline.String(e.Events(runID)) }

// Clock is the environment's fake clock.
type Clock struct {
	mu   sync.Mutex
	now  time.Time
	poke func()
}

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
	c.poke()
}

// Run is a run started in an Env.
type Run[O any] struct {
	*workflow.Run[O]
	env *Env
}

// Start starts a run; nothing runs until the test drives the environment.
func Start[I, O any](env *Env, wf *workflow.Workflow[I, O], input I, opts ...workflow.StartOption) *Run[O] {
	env.t.Helper()
	r, err := workflow.Start(context.Background(), env.Client, wf, input, opts...)
	if err != nil {
		env.t.Fatalf("workflowtest: start %s: %v", wf.Name(), err)
	}
	return &Run[O]{Run: r, env: env}
}

// Result drives the environment, skipping time, until the run ends, and
// returns its result. If the run is left waiting for an outside event (a
// hook nobody resumes), Result returns an error saying so.
func (r *Run[O]) Result() (O, error) {
	var zero O
	err := r.env.drive(func() bool {
		s, err := r.Run.Status(context.Background())
		return err == nil && s.Terminal()
	})
	if err != nil {
		return zero, fmt.Errorf("%w\n%s", err, r.env.Timeline(r.ID))
	}
	return r.Run.Result(context.Background())
}

// Status returns the run's status without driving anything.
func (r *Run[O]) Status() workflow.Status {
	s, err := r.Run.Status(context.Background())
	if err != nil {
		r.env.t.Fatalf("workflowtest: status of %s: %v", r.ID, err)
	}
	return s
}

// Events returns the run's event log.
func (r *Run[O]) Events() []world.Event { return r.env.Events(r.ID) }

// Timeline renders the run's event log.
func (r *Run[O]) Timeline() string { return r.env.Timeline(r.ID) }
