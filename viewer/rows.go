package viewer

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// A row is one line of a run's timeline: the run itself, a step, a
// sleep, a hook or a child run, with the spans it was busy in.
type row struct {
	Kind  string `json:"kind"` // run, step, wait, hook, child
	Label string `json:"label"`
	// Status is the row's last state: running, waiting, retrying,
	// completed, failed, cancelled, received.
	Status string `json:"status"`
	Spans  []span `json:"spans"`
	Marks  []mark `json:"marks,omitempty"`
	// Child is a child row's run ID, for a link to its own page.
	Child string `json:"child,omitempty"`
	// Heartbeat is a running step's last heartbeat (workflow.Heartbeat),
	// until its attempt ends.
	Heartbeat *heartbeat `json:"heartbeat,omitempty"`
}

// A heartbeat is the progress a step attempt last reported: its details
// as the step gave them, or Sealed where the run's payloads are encrypted
// and the viewer has no key.
type heartbeat struct {
	At      time.Time       `json:"at"`
	Attempt int             `json:"attempt"`
	Details json.RawMessage `json:"details,omitempty"`
	Sealed  bool            `json:"sealed,omitempty"`
	Slot    int64           `json:"slot"`
}

// A span is a stretch of a row's time: one step attempt, the backoff
// before a retry, a sleep, a hook's wait. End is zero while it lasts.
type span struct {
	Label  string    `json:"label"`
	Status string    `json:"status"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end,omitzero"`
	Slot   int64     `json:"slot"` // the event that closed it, or opened it while open
}

// A mark is an instant on a row: a hook delivery, a resume of the run.
type mark struct {
	Label string    `json:"label"`
	At    time.Time `json:"at"`
	Slot  int64     `json:"slot"`
}

// The parts of event payloads the timeline reads (internal/engine writes
// them).
type eventFields struct {
	Workflow   string    `json:"workflow"`
	Step       string    `json:"step"`
	Attempt    int       `json:"attempt"`
	RetryAt    time.Time `json:"retryAt"`
	ResumeAt   time.Time `json:"resumeAt"`
	Token      string    `json:"token"`
	ChildRunID string    `json:"childRunId"`
	Reason     string    `json:"reason"`
	// A heartbeat's details, and the stand-in for them where the viewer
	// could not open them (engine.ForReading masks sealed fields).
	Details json.RawMessage `json:"details"`
	Sealed  json.RawMessage `json:"$sealed"`
}

// rows builds a run's timeline from its log.
func rows(run world.Run, events []world.Event) []row {
	b := builder{byCorr: map[string]int{}}
	if len(events) == 0 {
		return nil
	}
	b.rows = append(b.rows, row{Kind: "run", Label: run.Workflow, Status: string(run.Status),
		Spans: []span{{Label: "run", Status: string(run.Status), Start: events[0].CreatedAt, Slot: events[0].Slot}}})
	for _, ev := range events {
		b.add(ev)
	}
	return b.rows
}

type builder struct {
	rows   []row
	byCorr map[string]int // correlation ID → row index
}

func (b *builder) add(ev world.Event) {
	var f eventFields
	_ = json.Unmarshal(ev.Payload, &f) // an unreadable payload still shows in the event list
	switch ev.Type {
	case world.StepCreated:
		b.open(ev, row{Kind: "step", Label: f.Step, Status: "pending"})
	case world.StepStarted:
		b.beat(ev, nil)
		b.closeLast(ev, "interrupted", "")
		b.push(ev, span{Label: attemptLabel(f.Attempt), Status: "running", Start: ev.CreatedAt, Slot: ev.Slot}, "running")
	case world.StepHeartbeat:
		b.beat(ev, &heartbeat{At: ev.CreatedAt, Attempt: f.Attempt, Details: f.Details, Sealed: f.Sealed != nil, Slot: ev.Slot})
	case world.StepRetrying:
		b.beat(ev, nil)
		b.closeLast(ev, "failed", "retrying")
		b.push(ev, span{Label: "backoff", Status: "backoff", Start: ev.CreatedAt, End: f.RetryAt, Slot: ev.Slot}, "retrying")
	case world.StepFailed:
		b.beat(ev, nil)
		b.closeLast(ev, "failed", "failed")
	case world.StepCompleted:
		b.beat(ev, nil)
		b.closeLast(ev, "completed", "completed")
	case world.WaitCreated:
		b.open(ev, row{Kind: "wait", Label: "sleep until " + f.ResumeAt.UTC().Format(time.TimeOnly), Status: "waiting"})
		b.push(ev, span{Label: "sleep", Status: "waiting", Start: ev.CreatedAt, Slot: ev.Slot}, "waiting")
	case world.WaitCompleted:
		b.closeLast(ev, "completed", "completed")
		b.resumed(ev, "woke")
	case world.HookCreated:
		b.open(ev, row{Kind: "hook", Label: "hook " + f.Token, Status: "waiting"})
		b.push(ev, span{Label: "hook wait", Status: "waiting", Start: ev.CreatedAt, Slot: ev.Slot}, "waiting")
	case world.HookReceived:
		// The first delivery ends the wait; later ones (a hook read with
		// All) are marks on its row.
		b.closeLast(ev, "completed", "received")
		if r := b.row(ev); r != nil {
			r.Marks = append(r.Marks, mark{Label: "received", At: ev.CreatedAt, Slot: ev.Slot})
		}
		b.resumed(ev, "hook")
	case world.HookConflict:
		b.closeLast(ev, "failed", "conflict")
	case world.HookDisposed:
		b.closeLast(ev, "", "")
	case world.ChildCreated:
		b.open(ev, row{Kind: "child", Label: f.Workflow, Status: "running", Child: f.ChildRunID})
		b.push(ev, span{Label: "child run", Status: "running", Start: ev.CreatedAt, Slot: ev.Slot}, "running")
	case world.ChildCompleted:
		status := "completed"
		if hasError(ev.Payload) {
			status = "failed"
		}
		b.closeLast(ev, status, status)
		b.resumed(ev, "child")
	case world.RunCompleted, world.RunFailed, world.RunCancelled:
		run := &b.rows[0].Spans[0]
		run.End, run.Slot = ev.CreatedAt, ev.Slot
		if f.Reason != "" {
			run.Label = f.Reason
		}
	}
}

// open starts the row of a correlation ID.
func (b *builder) open(ev world.Event, r row) {
	b.byCorr[ev.CorrelationID] = len(b.rows)
	b.rows = append(b.rows, r)
}

func (b *builder) row(ev world.Event) *row {
	i, ok := b.byCorr[ev.CorrelationID]
	if !ok {
		return nil
	}
	return &b.rows[i]
}

func (b *builder) push(ev world.Event, s span, status string) {
	if r := b.row(ev); r != nil {
		r.Spans = append(r.Spans, s)
		r.Status = status
	}
}

// closeLast ends the row's open span at ev; an empty status keeps the
// span's and the row's.
func (b *builder) closeLast(ev world.Event, spanStatus, rowStatus string) {
	r := b.row(ev)
	if r == nil {
		return
	}
	if n := len(r.Spans); n > 0 && r.Spans[n-1].End.IsZero() {
		s := &r.Spans[n-1]
		s.End, s.Slot = ev.CreatedAt, ev.Slot
		if spanStatus != "" && s.Status != "backoff" {
			s.Status = spanStatus
		}
	} else if n > 0 && r.Spans[n-1].Status == "backoff" && r.Spans[n-1].End.After(ev.CreatedAt) {
		r.Spans[n-1].End = ev.CreatedAt // the retry started before its backoff ran out
	}
	if rowStatus != "" {
		r.Status = rowStatus
	}
}

// beat sets the step's last heartbeat (nil: its attempt ended) and marks
// each on its row.
func (b *builder) beat(ev world.Event, hb *heartbeat) {
	r := b.row(ev)
	if r == nil {
		return
	}
	r.Heartbeat = hb
	if hb != nil {
		r.Marks = append(r.Marks, mark{Label: "heartbeat", At: ev.CreatedAt, Slot: ev.Slot})
	}
}

// resumed marks, on the run's row, an event that let the run go on.
func (b *builder) resumed(ev world.Event, why string) {
	b.rows[0].Marks = append(b.rows[0].Marks, mark{Label: "resumed (" + why + ")", At: ev.CreatedAt, Slot: ev.Slot})
}

func attemptLabel(n int) string {
	if n <= 0 {
		n = 1
	}
	return "attempt " + strconv.Itoa(n)
}

// hasError reports whether a payload carries an error field.
func hasError(payload json.RawMessage) bool {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(payload, &v) == nil && len(v.Error) > 0 && string(v.Error) != "null"
}
