package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// WorkflowFunc is a workflow with its types erased: JSON in, JSON out.
type WorkflowFunc func(ctx *Ctx, input json.RawMessage) (json.RawMessage, error)

// StepFunc is a step with its types erased.
type StepFunc func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)

// StepDef is a registered step and its retry policy.
type StepDef struct {
	Name string
	Fn   StepFunc
	// MaxRetries is how many times a failed attempt is retried.
	MaxRetries int
	// Backoff gives the delay before retry number n (1-based) when the
	// error does not say when to retry.
	Backoff func(retry int) time.Duration
	// Timeout bounds one attempt; zero means no bound. It is also the
	// attempt's declared duration: an invocation with less time left
	// hands the run off before starting it (duration.go).
	Timeout time.Duration
	// HeartbeatTimeout fails an attempt that goes this long without a
	// Heartbeat; zero means heartbeats are not required.
	HeartbeatTimeout time.Duration
}

// WorkflowDef is a registered workflow.
type WorkflowDef struct {
	Name string
	Fn   WorkflowFunc
	// Latest lets any deployment drive the workflow's runs instead of the
	// one that started them (the Latest version policy).
	Latest bool
	// Limits bound how many runs of the workflow run at once and how
	// often they start, per limit key (nil: unbounded).
	Limits *Limits
}

// Registry maps the workflow names found in event logs to code. Steps
// need none: a workflow's call carries the step's definition. Their names
// are kept unique, since the log and the test harness's replacements know
// steps by name, and the global registry looks them up by name for dynamic
// workflows, whose source calls steps it cannot import.
type Registry struct {
	mu        sync.RWMutex
	workflows map[string]*WorkflowDef
	steps     map[string]*StepDef
}

// Global is the registry that package-level definitions add themselves to.
var Global = NewRegistry()

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{workflows: map[string]*WorkflowDef{}, steps: map[string]*StepDef{}}
}

// AddWorkflow registers a workflow; a second one with the same name panics,
// because two definitions under one name would make replay ambiguous.
func (r *Registry) AddWorkflow(d *WorkflowDef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.workflows[d.Name]; dup {
		panic(fmt.Sprintf("workflow: two workflows are named %q", d.Name))
	}
	r.workflows[d.Name] = d
}

// AddStep registers a step; duplicate names panic.
func (r *Registry) AddStep(d *StepDef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.steps[d.Name] != nil {
		panic(fmt.Sprintf("workflow: two steps are named %q", d.Name))
	}
	r.steps[d.Name] = d
}

// Step looks a step up by name.
func (r *Registry) Step(name string) (*StepDef, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.steps[name]
	return d, ok
}

// Workflow looks a workflow up by name. A dynamic workflow's name is
// served by the dynamic runner, in every registry of a binary that links
// it: its code is in the run, not in the registry.
func (r *Registry) Workflow(name string) (*WorkflowDef, bool) {
	r.mu.RLock()
	d, ok := r.workflows[name]
	r.mu.RUnlock()
	if !ok && IsDynamic(name) {
		d = dynamicRunner.Load()
		ok = d != nil
	}
	return d, ok
}
