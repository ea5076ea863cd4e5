package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// AcquireLease implements world.Leaser.
func (w *World) AcquireLease(ctx context.Context, runID string, lease world.Lease, now time.Time) (world.Lease, error) {
	held, _, err := w.AcquireLeaseAt(ctx, runID, lease, now)
	return held, err
}

// AcquireLeaseAt implements world.RunReader: the lease's UPDATE returns
// the run's last slot as it found it.
func (w *World) AcquireLeaseAt(_ context.Context, runID string, lease world.Lease, now time.Time) (world.Lease, int64, error) {
	var (
		held world.Lease
		last int64
	)
	err := w.write(func(s *writeStmts) error {
		err := s.acquireLease.QueryRow(runID, lease.Owner, timeArg(lease.Until), timeArg(now), w.id).Scan(&last)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, held, err = leaseOf(s, runID); err != nil {
			return err
		}
		return world.ErrLeaseHeld
	})
	if err != nil {
		return held, -1, fmt.Errorf("lease run %s: %w", runID, err)
	}
	return lease, last, nil
}

// RenewLease implements world.Leaser.
func (w *World) RenewLease(_ context.Context, runID string, lease world.Lease) error {
	err := w.write(func(s *writeStmts) error {
		res, err := s.renewLease.Exec(runID, lease.Owner, timeArg(lease.Until))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		_, _, err = leaseOf(s, runID)
		return errors.Join(world.ErrLeaseLost, err)
	})
	if err != nil {
		return fmt.Errorf("renew lease of run %s: %w", runID, err)
	}
	return nil
}

// ReleaseLease implements world.Leaser.
func (w *World) ReleaseLease(_ context.Context, runID string, release world.Release) (int64, error) {
	var last int64
	err := w.write(func(s *writeStmts) error {
		err := s.releaseLease.QueryRow(runID, release.Owner, release.Seen, release.Suspended,
			timeArg(w.clock.Now()), timeArg(release.Wake)).Scan(&last)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		last, _, err = leaseOf(s, runID)
		return errors.Join(world.ErrLeaseLost, err)
	})
	if err != nil {
		return last, fmt.Errorf("release lease of run %s: %w", runID, err)
	}
	return last, nil
}

// leaseOf reads a run's last slot and lease; ErrRunNotFound if it has none.
func leaseOf(s *writeStmts, runID string) (last int64, held world.Lease, err error) {
	var until sql.NullInt64
	err = s.leaseState.QueryRow(runID).Scan(&last, &held.Owner, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, held, world.ErrRunNotFound
	}
	held.Until = timeCol(until)
	return last, held, err
}

// releaseDeadLeases frees every lease another World granted, when this
// World takes the directory's queue: one process serves a directory, so
// such a lease belongs to an invocation of a process that has died (or of
// a World closed before this one was opened). Leases this World granted
// are its own process's invocations', which may have started before it
// first received.
func (w *World) releaseDeadLeases(s *writeStmts) error {
	_, err := s.releaseOthersLeases.Exec(w.id)
	return err
}
