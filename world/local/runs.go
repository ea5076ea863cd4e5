package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/lambdaworkflow/workflow/world"
)

// defaultPageSize is ListRuns' page size when the filter sets no Limit.
const defaultPageSize = 100

// CreateRun implements world.Store.
func (w *World) CreateRun(_ context.Context, run world.Run, first []world.Event) (world.Run, error) {
	return w.createRun(run, first, nil)
}

// StartRun implements world.RunStarter: the run and its first message in
// one commit.
func (w *World) StartRun(_ context.Context, run world.Run, first []world.Event, msg world.Message) (world.Run, error) {
	return w.createRun(run, first, &msg)
}

// place decides, in the transaction that stores a new run, whether its
// message is queued now: it returns the message to queue (nil: none) and
// the run's status. StartLimited places the run under its limit
// (limits.go); without a place the message is queued as it is.
type place func(s *writeStmts, run world.Run, msg *world.Message) (*world.Message, world.RunStatus, error)

// createRun stores a run with its first events and, if msg is set and the
// run is new or unfinished, queues msg, in one transaction, acknowledged
// (WithFullSync): the caller hands the run's ID on.
func (w *World) createRun(run world.Run, first []world.Event, msg *world.Message) (world.Run, error) {
	r, err := w.storeRun(run, first, msg, nil)
	return r, w.acknowledged(err)
}

// storeRun is createRun up to the acknowledgement; placed, if set, places
// a new run's message.
func (w *World) storeRun(run world.Run, first []world.Event, msg *world.Message, placed place) (world.Run, error) {
	attrs, err := attrsArg(run.Attributes)
	if err != nil {
		return world.Run{}, fmt.Errorf("create run %s: %w", run.ID, err)
	}
	var (
		existing       world.Run
		exists, queued bool
	)
	err = w.write(func(s *writeStmts) error {
		res, err := s.insertRun.Exec(run.ID, run.Workflow, string(run.Status), blobArg(run.Input), blobArg(run.Output),
			blobArg(run.Error), attrs, timeArg(run.CreatedAt), timeArg(run.UpdatedAt),
			boolArg(run.Status.Terminal()), len(first)+1, dueAtCreation(run, w.clock.Now()))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		switch {
		case err != nil:
			return err
		case n == 0:
			exists = true
			if existing, err = scanRun(s.runByID.QueryRow(run.ID)); err != nil {
				return err
			}
		default:
			if err := insertEvents(s, run.ID, 1, first); err != nil {
				return err
			}
			if placed != nil {
				if msg, run.Status, err = placed(s, run, msg); err != nil {
					return err
				}
			}
		}
		if msg != nil && !existing.Status.Terminal() && existing.Status != world.StatusQueued {
			queued, err = w.enqueueIn(s, *msg)
		}
		return err
	})
	if err != nil {
		return world.Run{}, fmt.Errorf("create run %s: %w", run.ID, err)
	}
	if queued {
		w.signals.fire(queueTopic)
	}
	if exists {
		return existing, fmt.Errorf("create run %s: %w", run.ID, world.ErrRunExists)
	}
	w.slots.note(run.ID, int64(len(first)), run.Status.Terminal())
	if queued && !run.Status.Terminal() && w.dur.serving.Load() {
		w.fresh.put(run, first) // for the worker's first read of it, soon
	}
	w.signals.fire(runTopic(run.ID))
	run.Attributes = maps.Clone(run.Attributes)
	run.LastSlot = int64(len(first))
	return run, nil
}

func insertEvents(s *writeStmts, runID string, from int64, events []world.Event) error {
	for i, e := range events {
		if _, err := s.insertEvent.Exec(runID, from+int64(i), string(e.Type), e.CorrelationID,
			blobArg(e.Payload), timeArg(e.CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

// GetRun implements world.Store.
func (w *World) GetRun(ctx context.Context, id string) (world.Run, error) {
	r, err := w.GetRunUnsynced(ctx, id)
	if err == nil && r.Status.Terminal() {
		if err := w.dur.awaitFence(runTopic(id)); err != nil {
			return world.Run{}, fmt.Errorf("run %s: %w", id, err)
		}
	}
	return r, err
}

// GetRunUnsynced implements world.UnsyncedReader: GetRun without waiting
// for a run's end to be durable (WithFullSync).
func (w *World) GetRunUnsynced(ctx context.Context, id string) (world.Run, error) {
	r, err := scanRun(w.rs.run.QueryRowContext(readContext(ctx), id))
	if errors.Is(err, sql.ErrNoRows) {
		return world.Run{}, fmt.Errorf("run %s: %w", id, world.ErrRunNotFound)
	}
	if err != nil {
		return world.Run{}, fmt.Errorf("run %s: %w", id, err)
	}
	return r, nil
}

type scanner interface{ Scan(dest ...any) error }

// scanRun reads a row of runReadColumns, after the columns lead scans.
func scanRun(row scanner, lead ...any) (world.Run, error) {
	return scanRunAmong(row, lead, nil)
}

// scanRunThen reads a row of runReadColumns followed by the columns trail
// scans.
func scanRunThen(row scanner, trail ...any) (world.Run, error) {
	return scanRunAmong(row, nil, trail)
}

// scanRunAmong reads a row of the columns lead scans, runReadColumns and
// the columns trail scans.
func scanRunAmong(row scanner, lead, trail []any) (world.Run, error) {
	var (
		r                      world.Run
		status                 string
		input, output, errJSON []byte
		attrs                  sql.NullString
		created, updated       sql.NullInt64
	)
	dest := append(lead, &r.ID, &r.Workflow, &status, &input, &output, &errJSON, &attrs, &created, &updated, &r.LastSlot)
	if err := row.Scan(append(dest, trail...)...); err != nil {
		return world.Run{}, err
	}
	r.Status, r.Input, r.Output, r.Error = world.RunStatus(status), input, output, errJSON
	r.CreatedAt, r.UpdatedAt = timeCol(created), timeCol(updated)
	var err error
	r.Attributes, err = attrsCol(attrs)
	return r, err
}

// ListRuns implements world.Store. The cursor is the creation sequence
// number of the last run listed.
func (w *World) ListRuns(ctx context.Context, f world.RunFilter) (world.RunPage, error) {
	var (
		where []string
		args  []any
	)
	if f.Workflow != "" {
		where, args = append(where, "workflow = ?"), append(args, f.Workflow)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if f.Cursor != "" {
		seq, err := strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil {
			return world.RunPage{}, fmt.Errorf("list runs: bad cursor %q", f.Cursor)
		}
		where, args = append(where, "seq < ?"), append(args, seq)
	}
	for k, v := range f.Attributes {
		// A missing attribute matches "", as in world.MatchRun.
		where = append(where, "coalesce((SELECT value FROM json_each(runs.attributes) WHERE key = ?), '') = ?")
		args = append(args, k, v)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	q := "SELECT seq, " + runReadColumns + " FROM runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	// One more than the page, to know whether there is a next page.
	q += " ORDER BY seq DESC LIMIT ?"
	args = append(args, limit+1)

	rows, err := w.rdb.QueryContext(readContext(ctx), q, args...)
	if err != nil {
		return world.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	page, err := scanRunPage(rows, limit)
	if err != nil {
		return world.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	var ended []topic
	for _, r := range page.Runs {
		if r.Status.Terminal() {
			ended = append(ended, runTopic(r.ID))
		}
	}
	if err := w.dur.awaitFence(ended...); err != nil {
		return world.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	return page, nil
}

// scanRunPage reads up to limit runs of (seq, runReadColumns) and closes
// rows, so that the connection goes back to the pool before ListRuns waits
// for a fence: a further row means a next page.
func scanRunPage(rows *sql.Rows, limit int) (world.RunPage, error) {
	defer rows.Close()
	var (
		page    world.RunPage
		lastSeq int64
	)
	for rows.Next() {
		if len(page.Runs) == limit {
			page.NextCursor = strconv.FormatInt(lastSeq, 10)
			break
		}
		var seq int64
		r, err := scanRun(rows, &seq)
		if err != nil {
			return world.RunPage{}, err
		}
		page.Runs, lastSeq = append(page.Runs, r), seq
	}
	return page, rows.Err()
}

// AppendEvents implements world.Store.
func (w *World) AppendEvents(_ context.Context, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	return w.appendEvents("", runID, from, events, update)
}

// AppendLeased implements world.Leaser.
func (w *World) AppendLeased(_ context.Context, owner, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	if owner == "" {
		return nil, fmt.Errorf("append to run %s: no lease owner: %w", runID, world.ErrLeaseLost)
	}
	return w.appendEvents(owner, runID, from, events, update)
}

// appendEvents appends, under owner's lease unless owner is empty. An
// append without a lease comes from outside the run (a hook resume, a
// cancellation, a child's result) and is acknowledged (WithFullSync); one
// under the lease is the run's own, and only the run's end is fenced, for
// the readers that hand it on.
func (w *World) appendEvents(owner, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	missed, err := w.appendCommitted(owner, runID, from, events, update)
	if owner == "" {
		err = w.acknowledged(err)
	}
	return missed, err
}

// appendCommitted is appendEvents up to the acknowledgement.
func (w *World) appendCommitted(owner, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	var u world.RunUpdate
	if update != nil {
		u = *update
	}
	attrs, err := attrsArg(u.Attributes)
	if err != nil {
		return nil, fmt.Errorf("append to run %s: %w", runID, err)
	}
	var status, finished, updatedAt any
	if u.Status != "" {
		status, finished = string(u.Status), boolArg(u.Status.Terminal())
	}
	if update != nil {
		updatedAt = timeArg(w.clock.Now())
	}
	now := timeArg(w.clock.Now())
	var missed []world.Event
	err = w.write(func(s *writeStmts) error {
		if u.Status.Terminal() {
			w.dur.fenceNext(runTopic(runID))
		}
		var res sql.Result
		to := from + int64(len(events))
		switch {
		case update == nil && owner != "":
			res, err = s.advanceSlot.Exec(runID, from, to, owner)
		case update == nil:
			res, err = s.advanceSlotDue.Exec(runID, from, to, now)
		case owner != "" && !u.Status.Terminal():
			res, err = s.advanceRunLeased.Exec(runID, from, to, status, finished,
				blobArg(u.Output), blobArg(u.Error), attrs, updatedAt, owner)
		default:
			res, err = s.advanceRun.Exec(runID, from, to, status, finished,
				blobArg(u.Output), blobArg(u.Error), attrs, updatedAt, nullIfEmpty(owner), now)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				missed, err = refusedAppend(s, owner, runID, from)
			}
			return err
		}
		return insertEvents(s, runID, from, events)
	})
	if err != nil {
		return missed, fmt.Errorf("append to run %s at slot %d: %w", runID, from, err)
	}
	w.slots.note(runID, from+int64(len(events))-1, u.Status.Terminal())
	w.fresh.forget(runID)
	w.signals.fire(runTopic(runID))
	return nil, nil
}

// refusedAppend tells why an append at from did not take: the run is
// missing, the writer lost its lease, the slot is taken (returning the
// events from it on), from is past the end of the log, or the run has
// finished.
func refusedAppend(s *writeStmts, owner, runID string, from int64) ([]world.Event, error) {
	if owner != "" {
		if _, held, err := leaseOf(s, runID); err != nil || held.Owner != owner {
			return nil, errors.Join(world.ErrLeaseLost, err)
		}
	}
	var next int64
	var finished bool
	err := s.runState.QueryRow(runID).Scan(&next, &finished)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, world.ErrRunNotFound
	case err != nil:
		return nil, err

	case from >= 1 && from < next:
		rows, err := s.eventsFrom.Query(runID, from)
		if err != nil {
			return nil, err
		}
		missed, err := scanEvents(rows, runID)
		return missed, errors.Join(world.ErrSlotTaken, err)
	case from != next:
		return nil, fmt.Errorf("the log has %d events", next-1)
	default:
		return nil, world.ErrRunFinished
	}
}

// Events implements world.Store.
func (w *World) Events(ctx context.Context, runID string, after int64) ([]world.Event, error) {
	rows, err := w.rs.events.QueryContext(readContext(ctx), runID, after)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	evs, err := scanEvents(rows, runID)
	if err == nil && len(evs) > 0 {
		err = w.dur.awaitFence(runTopic(runID)) // the log may end with the run's end
	}
	if err == nil && len(evs) == 0 {
		// No events: tell an empty log from a missing run.
		var one int
		err = w.rs.runExists.QueryRowContext(readContext(ctx), runID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			err = world.ErrRunNotFound
		}
	}
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	return evs, nil
}

// scanEvents reads and closes rows of (slot, type, correlation_id,
// payload, created_at).
func scanEvents(rows *sql.Rows, runID string) ([]world.Event, error) {
	defer rows.Close()
	var evs []world.Event
	for rows.Next() {
		e := world.Event{RunID: runID}
		var (
			typ     string
			payload []byte
			created sql.NullInt64
		)
		if err := rows.Scan(&e.Slot, &typ, &e.CorrelationID, &payload, &created); err != nil {
			return nil, err
		}
		e.Type, e.Payload, e.CreatedAt = world.EventType(typ), payload, timeCol(created)
		evs = append(evs, e)
	}
	return evs, rows.Err()
}
