package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// OpKind says what a durable operation is.
type OpKind string

// The kinds of durable operation a workflow can issue.
const (
	OpStep  OpKind = "step"
	OpWait  OpKind = "sleep"
	OpHook  OpKind = "hook"
	OpChild OpKind = "child run"
	OpAttrs OpKind = "set attributes"
)

// Op is one durable operation issued by workflow code. Its correlation ID
// is its issue order within the run, which replay reproduces.
type Op struct {
	seq      int
	Kind     OpKind
	Name     string // step name, hook token, child workflow name
	input    json.RawMessage
	callSite string
	buffered bool // its creation event is in the write buffer or the log
	created  bool // its creation event has been applied

	done   bool
	output json.RawMessage
	errRaw json.RawMessage // encoded error, set when the op failed
	// recorded is a step_completed whose output is not decoded yet (lazy.go).
	recorded *world.Event

	step  stepState
	wait  waitState
	hook  *hookState
	child childState
	attrs map[string]string
}

type stepState struct {
	def     *StepDef
	attempt int       // last attempt started
	retryAt time.Time // when the next attempt may start
	running bool
	settled bool // its final result is buffered: never launch it again
	// startedAt is when the running attempt started while its
	// step_started is not buffered yet (see launchAtIssue); zero otherwise.
	startedAt time.Time
	// open: the log records the last attempt's start and no outcome. If
	// no attempt is running here, its invocation is gone (interrupted).
	open bool
	// deadline is when the last started attempt had to be over by, and
	// deadlineAt the same for an attempt started here, until its
	// step_started is buffered.
	deadline, deadlineAt time.Time
	// heartbeat is the last heartbeat details the log records for the step.
	heartbeat json.RawMessage
	beats     *beats // of the attempt running here
}

type waitState struct {
	duration   time.Duration
	resumeAt   time.Time
	completing bool // wait_completed is buffered
}

type childState struct {
	runID string
	limit *world.Limit // the limit the child starts under, if any
}

// ID returns the op's correlation ID.
func (o *Op) ID() string { return strconv.Itoa(o.seq) }

// Created reports whether the op's creation event has been applied.
func (o *Op) Created() bool { return o.created }

// Done reports whether the op has a result.
func (o *Op) Done() bool { return o.done }

// Result returns the op's output and encoded error; valid once Done.
func (o *Op) Result() (json.RawMessage, json.RawMessage) { return o.output, o.errRaw }

// Attempts returns how many attempts a step op has started.
func (o *Op) Attempts() int { return o.step.attempt }

// ChildRunID returns the run ID of a child op once it is created.
func (o *Op) ChildRunID() string { return o.child.runID }

func (o *Op) resolve(out, errRaw json.RawMessage) {
	if o.done {
		return // a duplicate result from a redelivered write; the first wins
	}
	o.done, o.output, o.errRaw = true, out, errRaw
}

func (o *Op) describe() string {
	s := fmt.Sprintf("%s %q", o.Kind, o.Name)
	if o.Kind == OpWait {
		s = fmt.Sprintf("sleep(%s)", o.wait.duration)
	}
	if o.callSite != "" {
		s += " at " + o.callSite
	}
	return s
}

// creationKind maps an op-creating event type to the op kind it creates.
// hook_conflict creates a hook op too, unless it reports a takeover; the
// apply code handles that case.
var creationKind = map[world.EventType]OpKind{
	world.StepCreated:   OpStep,
	world.WaitCreated:   OpWait,
	world.HookCreated:   OpHook,
	world.ChildCreated:  OpChild,
	world.AttributesSet: OpAttrs,
}

type hookState struct {
	token     string
	kind      string
	metadata  json.RawMessage
	force     bool
	retention time.Duration

	inbox         []HookMessage // received, not yet taken by workflow code
	conflictOwner string        // run holding the token when this run tried to claim it
	forceClaimed  string        // run that took the token over from this one
	createdAt     time.Time
	disposeAsked  bool
	disposing     bool // hook_disposed is buffered
	disposed      bool
	// replies is set on hooks whose resumers wait for a reply; owed are
	// the resume IDs of their messages, whose reply streams close when the
	// run ends.
	replies bool
	owed    []string
}

// receive takes a message the log recorded for the hook. A message
// recorded after another run took the token over belongs to that run: its
// resumer forwards it there (see Resume), so it is neither delivered nor
// answered here. One recorded after the hook was disposed is not
// delivered, but its caller is still told, when the run ends, that no
// reply will come.
func (h *hookState) receive(msg HookMessage) {
	if h.forceClaimed != "" {
		return
	}
	if h.replies {
		h.owed = append(h.owed, msg.ResumeID)
	}
	if !h.disposed {
		h.inbox = append(h.inbox, msg)
	}
}

// retainUntil is how long the token stays blocked once released: zero (free
// at once) unless the hook asked for retention.
func (h *hookState) retainUntil() time.Time {
	if h.retention <= 0 {
		return time.Time{}
	}
	return h.createdAt.Add(h.retention)
}

// HookMessage is one resume delivered to a hook.
type HookMessage struct {
	ResumeID string
	Payload  json.RawMessage
}

// HookReady reports whether taking the hook's next message would not block.
func (o *Op) HookReady() bool {
	h := o.hook
	return len(h.inbox) > 0 || h.conflictOwner != "" || h.forceClaimed != "" || h.disposeAsked
}
