// Package world defines the contract between the workflow runtime and the
// infrastructure it runs on: a durable store for runs, event logs and hook
// tokens, a queue with delays and deduplication, and append-only streams.
//
// A World is deliberately dumb. It knows nothing about replay; it only
// guarantees the few atomic operations the runtime builds on:
//
//   - an event takes a 1-based slot in its run's log by conditional write, and
//     a writer that loses a slot is told which events it missed;
//   - a hook token is claimed by conditional write and is unique across runs;
//   - an append to the log of a finished run is refused;
//   - a run is leased to at most one invocation at a time (see Leaser), and
//     an append made under a lease its writer lost is refused.
//
// What every World does is in World. The optional interfaces (Notifier,
// StreamSubscriber, RunReader, AppendLimiter, Inbox, DeadLetters, Sweeper,
// Expirer, UnsyncedReader) are capabilities a World may truly lack; each
// says why in its doc comment. A World that has one asserts it at compile
// time (var _ world.Notifier = (*World)(nil)), and the engine finds them
// once, when it is built.
//
// Every implementation runs the shared conformance suite in world/worldtest,
// which holds a World to the rules of the optional interfaces it has.
package world

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// World is everything the runtime needs from a backend.
type World interface {
	Store
	Queue
	Streams
	RunStarter
	Leaser
	Limiter
	Overdue
	// Close releases the World's resources. Pending work stays durable.
	Close() error
}

// Errors a World returns. Implementations wrap them (fmt.Errorf("...: %w", ...))
// so that callers match with errors.Is.
var (
	ErrRunNotFound  = errors.New("world: run not found")
	ErrRunExists    = errors.New("world: run already exists")
	ErrRunFinished  = errors.New("world: run has finished")
	ErrSlotTaken    = errors.New("world: event slot already taken")
	ErrHookNotFound = errors.New("world: hook not found")
	ErrHookConflict = errors.New("world: hook token held by another run")
	ErrHookNotOwner = errors.New("world: hook token owned by another run")
	ErrStreamClosed = errors.New("world: stream closed")
	ErrLeaseHeld    = errors.New("world: run leased to another invocation")
	ErrLeaseLost    = errors.New("world: run lease not held")
	ErrInboxChanged = errors.New("world: inbox message already taken")
)

// EventType names an entry of a run's event log.
type EventType string

// The event types of a run's log. Their payloads are defined by the runtime
// (internal/engine); a World stores them as opaque JSON.
const (
	RunCreated     EventType = "run_created"
	RunStarted     EventType = "run_started"
	RunCompleted   EventType = "run_completed"
	RunFailed      EventType = "run_failed"
	RunCancelled   EventType = "run_cancelled"
	RunContinued   EventType = "run_continued"
	StepCreated    EventType = "step_created"
	StepStarted    EventType = "step_started"
	StepCompleted  EventType = "step_completed"
	StepFailed     EventType = "step_failed"
	StepRetrying   EventType = "step_retrying"
	StepHeartbeat  EventType = "step_heartbeat"
	WaitCreated    EventType = "wait_created"
	WaitCompleted  EventType = "wait_completed"
	HookCreated    EventType = "hook_created"
	HookReceived   EventType = "hook_received"
	HookConflict   EventType = "hook_conflict"
	HookDisposed   EventType = "hook_disposed"
	ChildCreated   EventType = "child_created"
	ChildCompleted EventType = "child_completed"
	AttributesSet  EventType = "attributes_set"
	PatchMarker    EventType = "patch_marker"
)

// Event is one entry of a run's append-only log.
type Event struct {
	RunID string `json:"runId"`
	// Slot is the event's 1-based position in the run's log; it is the
	// event's ID within the run.
	Slot          int64           `json:"slot"`
	Type          EventType       `json:"type"`
	CorrelationID string          `json:"correlationId,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	CreatedAt     time.Time       `json:"createdAt"`
}

// RunStatus is the lifecycle state of a run.
type RunStatus string

// Run statuses. Completed, Failed, Cancelled and Continued are terminal.
// A Continued run ended by starting its successor (workflow.ContinueAsNew):
// its Output is the successor's run ID, as a JSON string.
const (
	StatusPending   RunStatus = "pending"
	StatusRunning   RunStatus = "running"
	StatusCompleted RunStatus = "completed"
	StatusFailed    RunStatus = "failed"
	StatusCancelled RunStatus = "cancelled"
	StatusContinued RunStatus = "continued"
)

// Terminal reports whether a run in this status can no longer change.
func (s RunStatus) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled || s == StatusContinued
}

// Run is the materialised state of a run, kept beside its log for listing
// and for cheap status reads.
type Run struct {
	ID         string            `json:"id"`
	Workflow   string            `json:"workflow"`
	Status     RunStatus         `json:"status"`
	Input      json.RawMessage   `json:"input,omitempty"`
	Output     json.RawMessage   `json:"output,omitempty"`
	Error      json.RawMessage   `json:"error,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
	UpdatedAt  time.Time         `json:"updatedAt"`
	// LastSlot is the slot of the run's last event, kept by the World, so a
	// writer from outside the run knows where to append without reading
	// the whole log. A stale value only costs that writer one conflict.
	LastSlot int64 `json:"lastSlot"`
	// Inbox is how many messages wait in the run's inbox (see Inbox), on
	// Worlds that have one: delivered, not yet in the log. GetRun sets
	// it; a listing may leave it zero.
	Inbox int `json:"inbox,omitempty"`
}

// RunUpdate changes a run's entity together with an append to its log.
// Zero fields are left as they are; Attributes are merged.
type RunUpdate struct {
	Status     RunStatus
	Output     json.RawMessage
	Error      json.RawMessage
	Attributes map[string]string
}

// RunFilter selects runs for ListRuns. Zero fields match everything.
type RunFilter struct {
	Workflow   string
	Status     RunStatus
	Attributes map[string]string // every pair must match
	// Cursor continues a previous listing (the NextCursor it returned).
	Cursor string
	Limit  int // 0 means the World's default page size
}

// RunPage is one page of a run listing, newest first.
type RunPage struct {
	Runs       []Run
	NextCursor string // empty when there are no more runs
}

// Hook is the record of a hook token: who owns it and how to deliver to it.
type Hook struct {
	Token         string          `json:"token"`
	RunID         string          `json:"runId"`
	CorrelationID string          `json:"correlationId"`
	Kind          string          `json:"kind,omitempty"` // "", "responding" or "webhook"
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	CreatedAt     time.Time       `json:"createdAt"`
	// Disposed hooks cannot be resumed. A disposed hook whose RetainUntil is
	// in the future still blocks its token from being claimed again.
	Disposed    bool      `json:"disposed,omitempty"`
	RetainUntil time.Time `json:"retainUntil,omitzero"`
}

// Store holds runs, their event logs and hook tokens.
type Store interface {
	// CreateRun stores a new run together with the first events of its log
	// (slots 1..n). If a run with that ID exists it returns the existing run
	// and an error matching ErrRunExists, and writes nothing.
	CreateRun(ctx context.Context, run Run, first []Event) (Run, error)
	// GetRun returns a run or an error matching ErrRunNotFound.
	GetRun(ctx context.Context, id string) (Run, error)
	// ListRuns lists runs, newest first.
	ListRuns(ctx context.Context, filter RunFilter) (RunPage, error)

	// AppendEvents writes events into slots from, from+1, ... of the run's
	// log, all or nothing, and applies update (if not nil) to the run in the
	// same atomic step. Slot and RunID of each event are set by the World.
	//
	// If slot from is already taken, nothing is written and the error matches
	// ErrSlotTaken; the returned events are the ones at slots >= from, i.e.
	// what the writer missed. If the run has a terminal status the error
	// matches ErrRunFinished; if it does not exist, ErrRunNotFound.
	AppendEvents(ctx context.Context, runID string, from int64, events []Event, update *RunUpdate) (missed []Event, err error)
	// Events returns the run's events at slots > after, in slot order.
	Events(ctx context.Context, runID string, after int64) ([]Event, error)

	// ClaimHook claims hook.Token for hook.RunID. Claiming a token the same
	// run and correlation already hold succeeds (redelivery is harmless).
	// A token held by another run, or disposed but retained, fails with an
	// error matching ErrHookConflict and returns the current holder, unless
	// force is set: then the claim takes the token over and returns the
	// previous holder (zero Hook if there was none).
	ClaimHook(ctx context.Context, hook Hook, force bool) (previous Hook, err error)
	// GetHook returns the hook holding token, disposed or not, or an error
	// matching ErrHookNotFound.
	GetHook(ctx context.Context, token string) (Hook, error)
	// DisposeHook marks the token disposed if runID still owns it; it keeps
	// the record until retainUntil (zero: removes it now). A token owned by
	// another run is left alone and the error matches ErrHookNotOwner.
	DisposeHook(ctx context.Context, token, runID string, retainUntil time.Time) error
}

// Message asks a worker to drive a run forward.
type Message struct {
	RunID string `json:"runId"`
	// DeliverAt delays delivery; the zero time means now. Worlds whose queue
	// caps the delay deliver early, and the runtime re-enqueues the rest.
	DeliverAt time.Time `json:"deliverAt,omitzero"`
	// DedupKey, when set, makes Enqueue a no-op while an undelivered message
	// with the same key is waiting.
	DedupKey string `json:"dedupKey,omitempty"`
	// Trace is the W3C traceparent of the span that queued the message,
	// if traced: the invocation it wakes links to it. Worlds may drop it.
	Trace string `json:"trace,omitempty"`
}

// Delivery is a received message. It stays invisible to other receivers
// until acknowledged or until its visibility timeout lapses.
type Delivery struct {
	Message
	Receipt string
	Attempt int // 1 on first delivery
}

// Queue carries work to workers, at least once.
type Queue interface {
	Enqueue(ctx context.Context, msg Message) error
	// Receive blocks until a message is due or ctx is done. The message is
	// hidden from other receivers for visibility. A Receive cut short by ctx
	// takes no message: none stays hidden for a receiver that has gone.
	Receive(ctx context.Context, visibility time.Duration) (Delivery, error)
	// Ack deletes a delivered message.
	Ack(ctx context.Context, d Delivery) error
	// Release makes a delivered message visible to receivers again at once,
	// as if its visibility timeout had lapsed. A worker that will not
	// process a delivery (it is stopping) releases it, so that the run does
	// not wait out the visibility timeout.
	Release(ctx context.Context, d Delivery) error
}

// Streams are named, append-only sequences of chunks, read from any index
// while they are being written.
type Streams interface {
	// WriteStream appends chunks to the named stream, creating it if needed.
	// Writing to a closed stream fails with ErrStreamClosed.
	WriteStream(ctx context.Context, name string, chunks [][]byte) error
	// CloseStream marks the stream complete. Closing twice is harmless.
	CloseStream(ctx context.Context, name string) error
	// ReadStream returns the chunks at indexes >= from (0-based) that exist
	// now, and whether the stream is closed. It does not block.
	ReadStream(ctx context.Context, name string, from int64) (chunks [][]byte, closed bool, err error)
}

// RunStarter stores a new run and queues its first message, in one atomic
// write where the World can (which saves a commit on every start), or more
// cheaply than CreateRun and Enqueue(msg) would. StartRun is CreateRun
// followed by Enqueue(msg), except that the message is queued only if the
// run is new or has not finished, and both happen or neither does; a
// World whose store and queue cannot commit together (the AWS World)
// stores the run due now (Overdue), so that the stuck-run check queues a
// message a crash kept back. An existing run is returned with an
// error matching ErrRunExists, as from CreateRun.
type RunStarter interface {
	StartRun(ctx context.Context, run Run, first []Event, msg Message) (Run, error)
}

// Notifier is implemented by Worlds that can tell a waiter about new events
// and stream chunks as they happen, instead of being polled. Use the
// package functions WaitEvents and WaitStream, which fall back to polling.
//
// Optional: only a World whose writers and waiters share a process (or a
// database that signals commits) can notify; a World of separate services
// (the AWS World) is polled.
type Notifier interface {
	// WaitEvents returns once the run's log has an event at a slot > after,
	// or when ctx is done.
	WaitEvents(ctx context.Context, runID string, after int64) error
	// WaitStream returns once the stream has a chunk at index >= from or is
	// closed, or when ctx is done.
	WaitStream(ctx context.Context, name string, from int64) error
}

// StreamSubscriber is implemented by Worlds that are polled for stream
// chunks but can also push word of a write to the readers that subscribed
// (the AWS World with an AppSync Events API). A reader subscribes before
// its first read, so that no write after that read goes unannounced, keeps
// polling at its pace as the fallback (a push may be lost), and reads at
// once when the subscription says the stream moved. The stream itself
// stays the source of truth: an announcement says only where its end is.
//
// Optional: it needs a push service beside the store, and a Notifier needs
// none.
type StreamSubscriber interface {
	// SubscribeStream subscribes to the stream's writes. It returns once
	// the subscription is in place or has failed for now (a failure costs
	// only the push: the subscription is retried and the poll goes on); it
	// blocks no longer than ctx.
	SubscribeStream(ctx context.Context, name string) StreamSubscription
}

// StreamSubscription is one reader's subscription to a stream's writes.
type StreamSubscription interface {
	// Moved returns a channel that is closed once a write was announced
	// that may have put a chunk at index >= from, or a lapse in the
	// subscription may have hidden one.
	Moved(from int64) <-chan struct{}
	// Close ends the subscription.
	Close()
}

// Lease says which invocation drives a run live, and until when it may be
// presumed alive without renewing. Until is wall-clock time: leases are
// about processes, not about a workflow's time.
type Lease struct {
	Owner string    `json:"owner"`
	Until time.Time `json:"until"`
}

// Leaser leases a run to one invocation, so that an invocation on another
// machine does not take a step attempt still running for one that died,
// nor run a step twice. The engine acquires the lease before it reads a
// run's log, renews it while it drives the run, writes the log with
// AppendLeased, and releases it when it suspends.
//
// Leases are compared with the now the caller passes and the Until it
// wrote, so the World needs no clock of its own.
type Leaser interface {
	// AcquireLease gives the run's lease to lease.Owner until lease.Until if
	// nobody holds it, its holder's Until is not after now, or lease.Owner
	// holds it already. Otherwise nothing changes and the error matches
	// ErrLeaseHeld; the holder's lease is returned. A missing run is
	// ErrRunNotFound.
	AcquireLease(ctx context.Context, runID string, lease Lease, now time.Time) (held Lease, err error)
	// RenewLease moves the Until of a lease that lease.Owner holds. If
	// another owner took it or it was released, the error matches
	// ErrLeaseLost. A lease past its Until that nobody took is still held.
	RenewLease(ctx context.Context, runID string, lease Lease) error
	// ReleaseLease frees the lease release.Owner holds (ErrLeaseLost if it
	// holds none) and returns the run's LastSlot as the release saw it, so
	// the releaser learns of events appended after its last read: the
	// lease kept other invocations from acting on them. In the same write
	// it records when the run is next due (see Release and Overdue).
	ReleaseLease(ctx context.Context, runID string, release Release) (lastSlot int64, err error)
	// AppendLeased is AppendEvents by the holder of the run's lease: if
	// owner does not hold it (another owner took it, or it was released)
	// nothing is written and the error matches ErrLeaseLost. This fences
	// off an invocation that stalled past its lease and was replaced.
	AppendLeased(ctx context.Context, owner, runID string, from int64, events []Event, update *RunUpdate) (missed []Event, err error)
}

// RunReader is implemented by Leasers that read a run together with the
// tail of its log in one request, and whose lease, when taken, tells how
// far the log reached: the engine then reads a run before it takes the
// lease and checks that read against the lease's answer instead of
// reading the log again after it (one request fewer per invocation). An
// event a lease's last holder wrote before releasing it is within the
// slot AcquireLeaseAt reports, so nothing it wrote is missed.
//
// Optional: it saves a request where requests cost (a database, a
// service); a World in memory reads as cheaply without it.
type RunReader interface {
	// ReadRun is GetRun and Events(id, after) in one request: the run,
	// with its LastSlot and Inbox, and the events of its log at slots >
	// after, in order, if they fit in the request's answer (complete);
	// if not, no events, for the caller to read them with Events when it
	// needs them. On an Inbox World a complete read also returns the
	// messages waiting in the run's inbox, as Inbox would, so that the
	// lease's holder may fold them without reading them again. A missing
	// run is ErrRunNotFound.
	ReadRun(ctx context.Context, id string, after int64) (run Run, events []Event, inbox []InboxMessage, complete bool, err error)
	// AcquireLeaseAt is AcquireLease that also returns the run's LastSlot
	// as the lease found it when it was given.
	AcquireLeaseAt(ctx context.Context, runID string, lease Lease, now time.Time) (held Lease, lastSlot int64, err error)
}

// AppendLimiter is implemented by Worlds that say how many events one
// append (AppendEvents, AppendLeased) may carry; the engine splits a
// larger batch into appends of that many, one after the other. A World
// without it takes 98.
//
// Optional: only a World whose atomic write has a size of its own to
// report (the AWS World packs events into DynamoDB's transaction) needs
// to say it.
type AppendLimiter interface {
	MaxAppend() int
}

// InboxMessage is an event delivered to a run from outside (a hook resume)
// that waits in the run's inbox until the run's lease holder folds it
// into the log.
type InboxMessage struct {
	// ID names the message: delivering the same ID twice is one message.
	ID string `json:"id"`
	// Event is what the holder appends: Type, CorrelationID, Payload and
	// CreatedAt (when it was delivered). RunID and Slot are unset.
	Event Event `json:"event"`
}

// Inbox is implemented by Worlds where many writers from outside a run
// can deliver to it at once without contending for its log's next slot:
// each delivery is a write of its own, and the invocation that holds the
// run's lease (Leaser) appends the waiting messages to the log in
// batches.
//
// Optional: it pays where a contended conditional write costs a round
// trip (DynamoDB); a World that serialises writes in one process or one
// database file appends a resume to the log at once.
type Inbox interface {
	// Deliver puts msg in the run's inbox. A message with the same ID
	// already there is left as it is, and no error is returned.
	Deliver(ctx context.Context, runID string, msg InboxMessage) error
	// Inbox returns the messages waiting in the run's inbox, oldest first
	// (by Event.CreatedAt, then ID): the order they are folded in.
	Inbox(ctx context.Context, runID string) ([]InboxMessage, error)
	// Withdraw takes message id out of the inbox and reports whether it
	// was still there (false: a fold took it, or it was never delivered).
	Withdraw(ctx context.Context, runID, id string) (bool, error)
	// AppendFolded is AppendLeased that also takes the messages folded (by
	// ID) out of the inbox, all in one atomic step: the events that record
	// them are among events. If one of them is no longer there, nothing is
	// written and the error matches ErrInboxChanged.
	AppendFolded(ctx context.Context, owner, runID string, from int64, events []Event, update *RunUpdate, folded []string) (missed []Event, err error)
}
