package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// schemaVersion is kept in PRAGMA user_version; a later version of this
// package that changes the schema migrates from it.
const schemaVersion = 5

// Times are INTEGER Unix nanoseconds, NULL for the zero time; JSON fields
// are BLOBs, NULL when empty.
const schema = `
CREATE TABLE runs (
	seq         INTEGER PRIMARY KEY, -- creation order: newest first, and the cursor
	id          TEXT NOT NULL UNIQUE,
	workflow    TEXT NOT NULL,
	status      TEXT NOT NULL,
	finished    INTEGER NOT NULL,    -- the status is terminal: appends are refused
	input       BLOB,
	output      BLOB,
	error       BLOB,
	attributes  TEXT,                -- a JSON object, NULL when empty
	created_at  INTEGER,
	updated_at  INTEGER,
	next_slot   INTEGER NOT NULL,    -- the slot the next append must start at
	lease_owner TEXT,                -- the invocation driving the run, NULL when none
	lease_until INTEGER,             -- when that invocation's lease lapses unless renewed
	lease_world TEXT,                -- the World (one Open of the directory) that granted the lease
	due_at      INTEGER,             -- when the run is next due to move, NULL: never (see world.Overdue)
	requeued_slot INTEGER            -- the last slot when the stuck-run check re-queued it, NULL: not since a suspension
);
CREATE INDEX runs_by_workflow ON runs(workflow);
CREATE INDEX runs_by_status ON runs(status);
-- The sweep's order; partial, so that no append of a running run writes it.
CREATE INDEX runs_finished ON runs(updated_at) WHERE finished = 1;
-- The stuck-run check's order; partial, so that waiting runs cost it nothing.
CREATE INDEX runs_due ON runs(due_at) WHERE due_at IS NOT NULL;

-- Clustered on (run_id, slot): a run's log is one range of the B-tree.
CREATE TABLE events (
	run_id         TEXT NOT NULL,
	slot           INTEGER NOT NULL,
	type           TEXT NOT NULL,
	correlation_id TEXT NOT NULL,
	payload        BLOB,
	created_at     INTEGER,
	PRIMARY KEY (run_id, slot)
) WITHOUT ROWID;

CREATE TABLE hooks (
	token          TEXT PRIMARY KEY,
	run_id         TEXT NOT NULL,
	correlation_id TEXT NOT NULL,
	kind           TEXT NOT NULL,
	metadata       BLOB,
	created_at     INTEGER,
	disposed       INTEGER NOT NULL,
	retain_until   INTEGER
) WITHOUT ROWID;

CREATE TABLE queue (
	id         INTEGER PRIMARY KEY, -- the receipt
	run_id     TEXT NOT NULL,
	deliver_at INTEGER,             -- as enqueued, handed back in the delivery
	dedup_key  TEXT,
	visible_at INTEGER NOT NULL,    -- when the message may next be received
	attempt    INTEGER NOT NULL     -- deliveries so far
);
CREATE INDEX queue_by_visible_at ON queue(visible_at);
-- At most one undelivered message per dedup key: Enqueue of a duplicate
-- conflicts here and is dropped.
CREATE UNIQUE INDEX queue_dedup ON queue(dedup_key) WHERE attempt = 0 AND dedup_key IS NOT NULL;

CREATE TABLE streams (
	name      TEXT PRIMARY KEY,
	length    INTEGER NOT NULL,
	closed    INTEGER NOT NULL,
	closed_at INTEGER             -- the first close, for reply streams' retention
) WITHOUT ROWID;
CREATE INDEX streams_closed ON streams(closed_at) WHERE closed = 1;

CREATE TABLE stream_chunks (
	name TEXT NOT NULL,
	idx  INTEGER NOT NULL,
	data BLOB,
	PRIMARY KEY (name, idx)
) WITHOUT ROWID;

` + limitTables

// limitTables hold flow control (limits.go): the runs holding a slot of
// a partition (a workflow and a start's key), the runs waiting for one in
// seq order, and each partition's rate window.
const limitTables = `CREATE TABLE limit_slots (
	workflow TEXT NOT NULL,
	key      TEXT NOT NULL,
	run_id   TEXT NOT NULL,
	PRIMARY KEY (workflow, key, run_id)
) WITHOUT ROWID;
CREATE TABLE limit_queue (
	seq        INTEGER PRIMARY KEY,
	workflow   TEXT NOT NULL,
	key        TEXT NOT NULL,
	run_id     TEXT NOT NULL,
	deliver_at INTEGER,            -- the first message, queued when a slot frees
	dedup_key  TEXT,
	trace      TEXT
);
CREATE INDEX limit_queue_order ON limit_queue(workflow, key, seq);
CREATE TABLE limit_rates (
	workflow TEXT NOT NULL,
	key      TEXT NOT NULL,
	win      INTEGER NOT NULL,     -- the latest window a start was placed in
	count    INTEGER NOT NULL,     -- the starts it holds
	PRIMARY KEY (workflow, key)
) WITHOUT ROWID;
`

// upgrades[v] takes a database from schema version v+1 to v+2.
var upgrades = []string{
	// 1 → 2: run leases.
	`ALTER TABLE runs ADD COLUMN lease_owner TEXT;
	ALTER TABLE runs ADD COLUMN lease_until INTEGER;
	ALTER TABLE runs ADD COLUMN lease_world TEXT;`,
	// 2 → 3: retention.
	`CREATE INDEX runs_finished ON runs(updated_at) WHERE finished = 1;
	ALTER TABLE streams ADD COLUMN closed_at INTEGER;
	CREATE INDEX streams_closed ON streams(closed_at) WHERE closed = 1;`,
	// 3 → 4: stuck runs. Runs of older versions get no due time: the
	// release of their lease sets one.
	`ALTER TABLE runs ADD COLUMN due_at INTEGER;
	ALTER TABLE runs ADD COLUMN requeued_slot INTEGER;
	CREATE INDEX runs_due ON runs(due_at) WHERE due_at IS NOT NULL;`,
	// 4 → 5: flow control.
	limitTables,
}

// migrate creates the schema in a new database, upgrades one written by an
// older version of this package, and refuses one written by a newer.
func migrate(ctx context.Context, conn *sql.Conn) error {
	var version int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	switch {
	case version == schemaVersion:
		return nil
	case version > schemaVersion:
		return fmt.Errorf("database has schema version %d, this package knows up to %d", version, schemaVersion)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed
	steps := []string{schema}
	if version > 0 {
		steps = upgrades[version-1:]
	}
	for _, step := range steps {
		if _, err := tx.ExecContext(ctx, step); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

const runColumns = `id, workflow, status, input, output, error, attributes, created_at, updated_at`

// runReadColumns are what scanRun reads: the stored columns and the slot
// of the last event; runReadColumnCount counts them.
const (
	runReadColumns     = runColumns + `, next_slot - 1`
	runReadColumnCount = 10
)

// advanceRunSet is the SET list of the appends that update the run
// (advanceRun, advanceRunLeased), before their due_at and WHERE clauses.
const advanceRunSet = `UPDATE runs SET
				next_slot = ?3,
				status = coalesce(?4, status),
				finished = coalesce(?5, finished),
				output = coalesce(?6, output),
				error = coalesce(?7, error),
				attributes = coalesce(json_patch(coalesce(attributes, '{}'), ?8), attributes),
				updated_at = coalesce(?9, updated_at)`

// writeStmts are prepared on the writer connection and used under World.wmu.
type writeStmts struct {
	begin, commit, rollback *sql.Stmt

	insertRun, runByID, runState                              *sql.Stmt
	advanceRun, advanceRunLeased, advanceSlot, advanceSlotDue *sql.Stmt

	acquireLease, renewLease, releaseLease, leaseState, releaseOthersLeases *sql.Stmt
	insertEvent, eventsFrom                                                 *sql.Stmt

	hookByToken, putHook, deleteHook, disposeHook *sql.Stmt

	enqueue, take, peek, markTaken, nextVisible, ack, release, releaseInflight *sql.Stmt

	streamState, putStreamLength, insertChunk, closeStream *sql.Stmt

	dataVersion *sql.Stmt // for watchOtherProcesses

	// all holds every statement above, for close: statements prepared on
	// a sql.Conn are not closed with it, and SQLite keeps a connection
	// with open statements open (a zombie holding the database, its WAL
	// and shared memory) after the connection's close.
	all []*sql.Stmt
}

// close closes every statement; the connection may close after it.
func (s *writeStmts) close() error {
	var errs []error
	for _, st := range s.all {
		errs = append(errs, st.Close())
	}
	s.all = nil
	return errors.Join(errs...)
}

func (s *writeStmts) prepare(ctx context.Context, conn *sql.Conn) error {
	return prepareAll(ctx, conn.PrepareContext, &s.all, map[**sql.Stmt]string{
		&s.begin:    `BEGIN IMMEDIATE`,
		&s.commit:   `COMMIT`,
		&s.rollback: `ROLLBACK`,

		&s.insertRun: `INSERT INTO runs (` + runColumns + `, finished, next_slot, due_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		&s.runByID: `SELECT ` + runReadColumns + ` FROM runs WHERE id = ?`,
		// The fast path of an append: it succeeds only if from is the next
		// slot, the run is not finished and, for a leased append (?10 set),
		// the writer holds the lease; NULL arguments leave a column be. An
		// append from outside the run (?10 NULL) makes it due at ?11; the
		// end of the run clears its due time.
		&s.advanceRun: advanceRunSet + `,
				due_at = CASE WHEN coalesce(?5, 0) = 1 THEN NULL WHEN ?10 IS NULL THEN ?11 ELSE due_at END
			WHERE id = ?1 AND next_slot = ?2 AND finished = 0 AND (?10 IS NULL OR lease_owner = ?10)`,
		// advanceRun for a leased append that does not end the run: it
		// does not set due_at, so that SQLite rewrites no page of the
		// runs_due index (it rewrites an index entry for every column a
		// SET names, changed or not).
		&s.advanceRunLeased: advanceRunSet + `
			WHERE id = ?1 AND next_slot = ?2 AND finished = 0 AND lease_owner = ?10`,
		// advanceRun for an append with no run update: it leaves the
		// indexed status and, leased (?4), due_at columns alone, so that a
		// step's append writes two pages, the run's and the log's.
		&s.advanceSlot: `UPDATE runs SET next_slot = ?3
			WHERE id = ?1 AND next_slot = ?2 AND finished = 0 AND lease_owner = ?4`,
		&s.advanceSlotDue: `UPDATE runs SET next_slot = ?3, due_at = ?4
			WHERE id = ?1 AND next_slot = ?2 AND finished = 0`,
		&s.runState: `SELECT next_slot, finished FROM runs WHERE id = ?`,

		&s.acquireLease: `UPDATE runs SET lease_owner = ?2, lease_until = ?3, lease_world = ?5
			WHERE id = ?1 AND (lease_owner IS NULL OR lease_owner = ?2 OR lease_until <= ?4) RETURNING next_slot - 1`,
		&s.renewLease: `UPDATE runs SET lease_until = ?3 WHERE id = ?1 AND lease_owner = ?2`,
		// A suspension (?4) with no event after the releaser's last (?3)
		// makes the run due at its wake-up (?6, NULL: never) and clears the
		// check's re-queue mark; anything else makes it due now (?5).
		&s.releaseLease: `UPDATE runs SET lease_owner = NULL, lease_until = NULL, lease_world = NULL,
				due_at = CASE WHEN ?4 AND next_slot - 1 <= ?3 THEN ?6 ELSE ?5 END,
				requeued_slot = CASE WHEN ?4 AND next_slot - 1 <= ?3 THEN NULL ELSE requeued_slot END
			WHERE id = ?1 AND lease_owner = ?2 RETURNING next_slot - 1`,
		&s.leaseState: `SELECT next_slot - 1, coalesce(lease_owner, ''), lease_until FROM runs WHERE id = ?`,
		&s.releaseOthersLeases: `UPDATE runs SET lease_owner = NULL, lease_until = NULL, lease_world = NULL
			WHERE lease_owner IS NOT NULL AND lease_world IS NOT ?1`,
		&s.insertEvent: `INSERT INTO events (run_id, slot, type, correlation_id, payload, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`,
		&s.eventsFrom: `SELECT slot, type, correlation_id, payload, created_at
			FROM events WHERE run_id = ? AND slot >= ? ORDER BY slot`,

		&s.hookByToken: `SELECT ` + hookColumns + ` FROM hooks WHERE token = ?`,
		&s.putHook:     `INSERT OR REPLACE INTO hooks (` + hookColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		&s.deleteHook:  `DELETE FROM hooks WHERE token = ?`,
		&s.disposeHook: `UPDATE hooks SET disposed = 1, retain_until = ? WHERE token = ?`,

		&s.enqueue: `INSERT INTO queue (run_id, deliver_at, dedup_key, visible_at, attempt)
			VALUES (?, ?, ?, ?, 0) ON CONFLICT DO NOTHING`,
		// Takes the earliest due message and hides it, in one statement.
		&s.take: `UPDATE queue SET visible_at = ?1, attempt = attempt + 1
			WHERE id = (SELECT id FROM queue WHERE visible_at <= ?2 ORDER BY visible_at, id LIMIT 1)
			RETURNING id, run_id, deliver_at, dedup_key, attempt`,
		// The earliest visible message, to take without a write (queue.go's
		// take), and when the next of the others becomes visible.
		&s.peek: `SELECT id, run_id, deliver_at, dedup_key, attempt,
				(SELECT min(visible_at) FROM queue WHERE id <> q.id)
			FROM queue q WHERE visible_at <= ?1 ORDER BY visible_at, id LIMIT 1`,
		&s.markTaken:   `UPDATE queue SET visible_at = ?1, attempt = ?2 WHERE id = ?3`,
		&s.nextVisible: `SELECT min(visible_at) FROM queue`,
		&s.ack:         `DELETE FROM queue WHERE id = ?`,
		// Only the latest delivery (same attempt) of a message releases it.
		&s.release: `UPDATE queue SET visible_at = ?1 WHERE id = ?2 AND attempt = ?3 AND visible_at > ?1`,
		// Received messages are hidden until visible_at; release them now.
		&s.releaseInflight: `UPDATE queue SET visible_at = ?1 WHERE attempt > 0 AND visible_at > ?1`,

		&s.streamState:     `SELECT length, closed FROM streams WHERE name = ?`,
		&s.putStreamLength: `INSERT INTO streams (name, length, closed) VALUES (?1, ?2, 0) ON CONFLICT (name) DO UPDATE SET length = ?2`,
		&s.insertChunk:     `INSERT INTO stream_chunks (name, idx, data) VALUES (?, ?, ?)`,
		&s.closeStream: `INSERT INTO streams (name, length, closed, closed_at) VALUES (?1, 0, 1, ?2)
			ON CONFLICT (name) DO UPDATE SET closed = 1, closed_at = coalesce(closed_at, ?2)`,

		&s.dataVersion: `PRAGMA data_version`,
	})
}

const hookColumns = `token, run_id, correlation_id, kind, metadata, created_at, disposed, retain_until`

// readStmts are prepared on the read pool. Every statement on that pool
// runs under readContext.
type readStmts struct {
	run, runExists, events, nextSlot, runAndLog *sql.Stmt
	hook                                        *sql.Stmt
	streamState, chunks                         *sql.Stmt
}

func (s *readStmts) prepare(ctx context.Context, db *sql.DB) error {
	return prepareAll(ctx, db.PrepareContext, nil, map[**sql.Stmt]string{
		&s.run:       `SELECT ` + runReadColumns + ` FROM runs WHERE id = ?`,
		&s.runExists: `SELECT 1 FROM runs WHERE id = ?`,
		&s.events: `SELECT slot, type, correlation_id, payload, created_at
			FROM events WHERE run_id = ? AND slot > ? ORDER BY slot`,
		&s.nextSlot: `SELECT next_slot FROM runs WHERE id = ?`,
		// ReadRun's: the run's columns with each of the first ?3 events
		// after slot ?2, or with NULLs if there is none.
		&s.runAndLog: `SELECT ` + runReadColumns + `, e.slot, e.type, e.correlation_id, e.payload, e.at
			FROM runs LEFT JOIN (SELECT slot, type, correlation_id, payload, created_at AS at
				FROM events WHERE run_id = ?1 AND slot > ?2 ORDER BY slot LIMIT ?3) e
			WHERE id = ?1 ORDER BY e.slot`,

		&s.hook: `SELECT ` + hookColumns + ` FROM hooks WHERE token = ?`,

		&s.streamState: `SELECT length, closed FROM streams WHERE name = ?`,
		&s.chunks:      `SELECT data FROM stream_chunks WHERE name = ? AND idx >= ? ORDER BY idx`,
	})
}

// prepareAll prepares each query into its statement, and appends each
// statement to all if given.
func prepareAll(ctx context.Context, prepare func(context.Context, string) (*sql.Stmt, error), all *[]*sql.Stmt, stmts map[**sql.Stmt]string) error {
	for p, query := range stmts {
		s, err := prepare(ctx, query)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", query, err)
		}
		*p = s
		if all != nil {
			*all = append(*all, s)
		}
	}
	return nil
}
