package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// Ctx is what workflow code holds: the door to its run's invocation. All of
// its methods must be called from workflow coroutines, never from steps or
// from goroutines the workflow started itself.
type Ctx struct {
	inv *invocation
}

// RunID returns the run's ID.
func (c *Ctx) RunID() string { return c.inv.run.ID }

// WorkflowName returns the name of the running workflow.
func (c *Ctx) WorkflowName() string { return c.inv.run.Workflow }

// Attributes returns the run's attributes as they were when it started.
func (c *Ctx) Attributes() map[string]string { return c.inv.created.Attributes }

// Now returns the deterministic workflow time: when the last event the
// workflow has seen was recorded.
func (c *Ctx) Now() time.Time { return c.inv.now }

// Rand returns the run's deterministic random source.
func (c *Ctx) Rand() *rand.Rand { return c.inv.rng }

// UUID returns a version 4 UUID drawn from the run's random source.
func (c *Ctx) UUID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(c.inv.rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Replaying reports whether the workflow is re-executing recorded history.
func (c *Ctx) Replaying() bool { return c.inv.replay.active }

// Block parks the calling coroutine until cond holds. cond must only read
// workflow state.
func (c *Ctx) Block(cond func() bool) { c.inv.sched.block(cond) }

// Go starts a coroutine that runs fn deterministically alongside the others.
func (c *Ctx) Go(fn func(*Ctx)) {
	c.inv.guardIssue()
	c.inv.sched.spawn(func() { fn(c) })
}

// CallStep issues a step and returns its op without waiting. A live
// invocation starts the step's first attempt here (see launchAtIssue).
func (c *Ctx) CallStep(def *StepDef, input json.RawMessage, callSite string) *Op {
	op := c.inv.issue(OpStep, def.Name, callSite)
	op.input, op.step.def = input, def
	c.inv.launchAtIssue(op)
	return op
}

// Sleep issues a durable timer.
func (c *Ctx) Sleep(d time.Duration, callSite string) *Op {
	op := c.inv.issue(OpWait, "sleep", callSite)
	op.wait.duration = max(d, 0)
	return op
}

// HookOptions configures CreateHook.
type HookOptions struct {
	Token     string
	Kind      string
	Metadata  json.RawMessage
	Force     bool
	Retention time.Duration
	// Replies says the hook's resumers wait for a reply to each message.
	Replies bool
}

// CreateHook issues a hook.
func (c *Ctx) CreateHook(o HookOptions, callSite string) *Op {
	op := c.inv.issue(OpHook, o.Token, callSite)
	op.hook = &hookState{token: o.Token, kind: o.Kind, metadata: o.Metadata, force: o.Force, retention: o.Retention, replies: o.Replies}
	return op
}

// NextHookMessage blocks until the hook has a message, a conflict, or was
// taken over or disposed. Messages recorded before a takeover are still
// delivered first: they were sent while this run owned the token. ok is
// false when no message will come; then conflictOwner or forceClaimedBy
// says why (both empty: disposed).
func (c *Ctx) NextHookMessage(op *Op) (msg HookMessage, ok bool, conflictOwner, forceClaimedBy string) {
	h := op.hook
	c.Block(op.HookReady)
	if len(h.inbox) > 0 {
		msg, h.inbox = h.inbox[0], h.inbox[1:]
		return msg, true, "", ""
	}
	return HookMessage{}, false, h.conflictOwner, h.forceClaimed
}

// HookOwner blocks until the hook's claim is settled and returns the run
// that holds the token if it is not this one: the run that held it when
// this one tried to claim it, or the one that took it over since.
func (c *Ctx) HookOwner(op *Op) string {
	c.Block(func() bool { return op.created })
	if op.hook.conflictOwner != "" {
		return op.hook.conflictOwner
	}
	return op.hook.forceClaimed
}

// WebhookBaseURL is the public base URL webhook URLs are built on.
func (c *Ctx) WebhookBaseURL() string { return c.inv.e.WebhookBaseURL }

// DisposeHook releases the hook's token. It is not durable work during an
// unwind: then it does nothing.
func (c *Ctx) DisposeHook(op *Op) {
	if c.inv.sched.unwinding || op.hook.disposeAsked {
		return
	}
	op.hook.disposeAsked = true
}

// StartChild issues a child run of the named workflow, under limit if
// set.
func (c *Ctx) StartChild(workflow string, input json.RawMessage, runID string, limit *world.Limit, callSite string) *Op {
	op := c.inv.issue(OpChild, workflow, callSite)
	op.input, op.child.runID, op.child.limit = input, runID, limit
	return op
}

// SetAttributes records attributes on the run.
func (c *Ctx) SetAttributes(attrs map[string]string, callSite string) {
	op := c.inv.issue(OpAttrs, "attributes", callSite)
	op.attrs = attrs
}

// Await blocks the calling coroutine until op is done. A recorded output
// that does not decode fails the run as a corrupted log, and the
// coroutine never runs on.
func (c *Ctx) Await(op *Op) (json.RawMessage, json.RawMessage) {
	c.Block(op.Done)
	if err := op.decodeRecorded(); err != nil {
		c.inv.fatal = err
		c.Block(func() bool { return false })
	}
	return op.Result()
}
