package local

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// The engine reads a run and the tail of its log before it takes the
// run's lease, and checks that read against the slot the lease reports
// (world.RunReader). Here that read is one statement instead of a GetRun
// and an Events, and for a run this World has just started it is no
// statement at all: the start is what the World wrote, so it answers from
// memory. Both are reads made before the lease, so a write that lands
// after them is read after the lease, as the lease's slot tells.

var _ world.RunReader = (*World)(nil)

// readRunMax is how many events ReadRun returns: a longer tail is left for
// the engine to read after the lease, so that a delivery that does nothing
// with the log (dropped, or deferred to the lease's holder) costs one
// short read however long the log is.
const readRunMax = 256

// ReadRun implements world.RunReader. The World has no inbox, so the
// inbox it returns is always empty.
func (w *World) ReadRun(ctx context.Context, id string, after int64) (world.Run, []world.Event, []world.InboxMessage, bool, error) {
	if r, ok := w.fresh.take(id); ok && after <= r.run.LastSlot {
		var tail []world.Event // nil when empty, as a read of the database
		if after < r.run.LastSlot {
			tail = r.events[max(after, 0):]
		}
		return r.run, tail, nil, true, nil
	}
	run, events, complete, err := w.readRunAndLog(ctx, id, after)
	if err == nil && (run.Status.Terminal() || len(events) > 0) {
		err = w.dur.awaitFence(runTopic(id)) // as GetRun and Events: the log may end with the run's end
	}
	if err != nil {
		return world.Run{}, nil, nil, false, fmt.Errorf("read run %s: %w", id, err)
	}
	return run, events, nil, complete, nil
}

// readRunAndLog reads the run and up to readRunMax of its events after
// after, with one statement on the read pool: one row per event, each
// with the run's columns (scanned once), or one row with no event.
func (w *World) readRunAndLog(ctx context.Context, id string, after int64) (world.Run, []world.Event, bool, error) {
	rows, err := w.rs.runAndLog.QueryContext(readContext(ctx), id, after, readRunMax+1)
	if err != nil {
		return world.Run{}, nil, false, err
	}
	defer rows.Close()
	var (
		run    world.Run
		events []world.Event
		seen   bool
		e      eventRow
		later  []any // a later row's destinations: its run columns dropped, its event's into e
	)
	for rows.Next() {
		var scanned error
		if !seen {
			run, scanned = scanRunThen(rows, e.dest()...)
			later = append(skipRunColumns(), e.dest()...)
		} else {
			scanned = rows.Scan(later...)
		}
		if scanned != nil {
			return world.Run{}, nil, false, scanned
		}
		seen = true
		if e.slot.Valid {
			events = append(events, e.event(id))
		}
	}
	if err := rows.Err(); err != nil {
		return world.Run{}, nil, false, err
	}
	if !seen {
		return world.Run{}, nil, false, world.ErrRunNotFound
	}
	if len(events) > readRunMax {
		return run, nil, false, nil
	}
	return run, events, true, nil
}

// eventRow is the event columns of a runAndLog row, NULL when the run's
// log has no event after the read's slot.
type eventRow struct {
	slot, created sql.NullInt64
	typ, corr     sql.NullString
	payload       []byte
}

func (e *eventRow) dest() []any { return []any{&e.slot, &e.typ, &e.corr, &e.payload, &e.created} }

func (e *eventRow) event(runID string) world.Event {
	return world.Event{RunID: runID, Slot: e.slot.Int64, Type: world.EventType(e.typ.String),
		CorrelationID: e.corr.String, Payload: e.payload, CreatedAt: timeCol(e.created)}
}

// skipRunColumns are Scan destinations that drop a row's run columns
// without copying them: the first row has read them.
func skipRunColumns() []any {
	dest := make([]any, runReadColumnCount)
	for i := range dest {
		dest[i] = new(sql.RawBytes)
	}
	return dest
}

// freshRuns holds the runs this World started and has not written since,
// as stored, until the engine's first read of each (ReadRun). Only a World
// that serves the queue keeps them: its worker reads them soon.
type freshRuns struct {
	mu   sync.Mutex
	runs map[string]freshRun
}

type freshRun struct {
	run    world.Run
	events []world.Event
}

// freshMax bounds what freshRuns holds: runs past it (a burst of starts
// faster than the worker takes them) are read from the database, and a
// run whose input and first events are larger than freshMaxBytes is
// never held.
const (
	freshMax      = 1024
	freshMaxBytes = 16 << 10
)

// put holds a run just stored with its first events, unless it is too
// large or the World holds freshMax already.
func (f *freshRuns) put(run world.Run, first []world.Event) {
	size := len(run.Input)
	for _, e := range first {
		size += len(e.Payload)
	}
	if size > freshMaxBytes {
		return
	}
	run.Attributes = maps.Clone(run.Attributes)
	run.LastSlot = int64(len(first))
	events := make([]world.Event, len(first))
	for i, e := range first {
		events[i] = storedEvent(run.ID, int64(i+1), e)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs == nil {
		f.runs = map[string]freshRun{}
	}
	if len(f.runs) < freshMax {
		f.runs[run.ID] = freshRun{storedRun(run), events}
	}
}

// take returns the held run and forgets it.
func (f *freshRuns) take(id string) (freshRun, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.runs[id]
	delete(f.runs, id)
	return r, ok
}

// forget drops a run that is written again: a read from memory would miss
// the write.
func (f *freshRuns) forget(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.runs, id)
}

// reset drops every run, when another process has written to the
// database.
func (f *freshRuns) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.runs)
}

// storedRun is run as a read of its row returns it: times at the
// nanoseconds stored, empty blobs as nil.
func storedRun(r world.Run) world.Run {
	r.Input, r.Output, r.Error = storedBlob(r.Input), storedBlob(r.Output), storedBlob(r.Error)
	r.CreatedAt, r.UpdatedAt = storedTime(r.CreatedAt), storedTime(r.UpdatedAt)
	if len(r.Attributes) == 0 {
		r.Attributes = nil
	}
	return r
}

// storedEvent is e as a read of the log returns it at slot.
func storedEvent(runID string, slot int64, e world.Event) world.Event {
	e.RunID, e.Slot = runID, slot
	e.Payload, e.CreatedAt = storedBlob(e.Payload), storedTime(e.CreatedAt)
	return e
}

// storedBlob is a copy of b, nil if empty; the caller may reuse b.
func storedBlob(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano())
}
