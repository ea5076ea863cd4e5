package local_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

// TestUpgradeToLeases opens a database of schema version 1, from before
// run leases (and retention, due times and limits): the World adds the lease
// columns and keeps the runs.
func TestUpgradeToLeases(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w, err := local.Open(dir)
	check(t, "Open", err)
	run := world.Run{ID: "old", Workflow: "wf", Status: world.StatusPending}
	check(t, "CreateRun", ignore(w.CreateRun(ctx, run, []world.Event{{Type: world.RunCreated}})))
	check(t, "Close", w.Close())

	db, err := sql.Open("sqlite", filepath.Join(dir, "world.db"))
	check(t, "sql.Open", err)
	_, err = db.Exec(`ALTER TABLE runs DROP COLUMN lease_owner; ALTER TABLE runs DROP COLUMN lease_until;
		ALTER TABLE runs DROP COLUMN lease_world;
		DROP INDEX runs_finished; DROP INDEX streams_closed; ALTER TABLE streams DROP COLUMN closed_at;
		DROP INDEX runs_due; ALTER TABLE runs DROP COLUMN due_at; ALTER TABLE runs DROP COLUMN requeued_slot;
		DROP TABLE limit_slots; DROP TABLE limit_queue; DROP TABLE limit_rates;
		PRAGMA user_version = 1`)
	check(t, "downgrade to version 1", err)
	check(t, "close", db.Close())

	w = open(t, dir)
	at := time.Now()
	check(t, "AcquireLease after the upgrade", ignore(w.AcquireLease(ctx, run.ID, world.Lease{Owner: "a", Until: at.Add(time.Minute)}, at)))
	if _, err := w.AcquireLease(ctx, run.ID, world.Lease{Owner: "b", Until: at.Add(time.Minute)}, at); !errors.Is(err, world.ErrLeaseHeld) {
		t.Fatalf("the upgraded database does not keep leases: %v", err)
	}
	// A run of the old schema has no due time until its lease's release.
	check(t, "ReleaseLease", ignore(w.ReleaseLease(ctx, run.ID, world.Release{Owner: "a", Seen: 1})))
	if due, err := w.OverdueRuns(ctx, time.Now().Add(time.Hour), time.Now(), 10); err != nil || len(due) != 1 {
		t.Fatalf("overdue runs after the upgrade: %+v, %v; want the released run", due, err)
	}
}

// TestServingReleasesDeadLeases: one process serves a directory, so a
// lease found when a World starts serving the queue belonged to a process
// that died, and the run is free at once instead of after the lease.
func TestServingReleasesDeadLeases(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dead := open(t, dir)
	run := world.Run{ID: "r", Workflow: "wf", Status: world.StatusRunning}
	check(t, "CreateRun", ignore(dead.CreateRun(ctx, run, []world.Event{{Type: world.RunCreated}})))
	at := time.Now()
	check(t, "AcquireLease", ignore(dead.AcquireLease(ctx, run.ID, world.Lease{Owner: "dead", Until: at.Add(time.Hour)}, at)))
	check(t, "Close", dead.Close())

	w := open(t, dir)
	check(t, "Enqueue", w.Enqueue(ctx, world.Message{RunID: run.ID}))
	check(t, "Receive", ignore(w.Receive(ctx, time.Minute)))
	if _, err := w.AcquireLease(ctx, run.ID, world.Lease{Owner: "new", Until: at.Add(time.Minute)}, at); err != nil {
		t.Fatalf("a dead process's lease still holds the run: %v", err)
	}
}

// TestServingKeepsOwnLeases: a lease this World granted before it first
// received (an invocation of this process that started first) is live.
func TestServingKeepsOwnLeases(t *testing.T) {
	ctx := t.Context()
	w := open(t, t.TempDir())
	run := world.Run{ID: "r", Workflow: "wf", Status: world.StatusRunning}
	check(t, "CreateRun", ignore(w.CreateRun(ctx, run, []world.Event{{Type: world.RunCreated}})))
	at := time.Now()
	check(t, "AcquireLease", ignore(w.AcquireLease(ctx, run.ID, world.Lease{Owner: "live", Until: at.Add(time.Hour)}, at)))
	check(t, "Enqueue", w.Enqueue(ctx, world.Message{RunID: run.ID}))
	check(t, "Receive", ignore(w.Receive(ctx, time.Minute)))
	if _, err := w.AcquireLease(ctx, run.ID, world.Lease{Owner: "other", Until: at.Add(time.Minute)}, at); !errors.Is(err, world.ErrLeaseHeld) {
		t.Fatalf("taking the queue freed a live invocation's lease: %v", err)
	}
}
