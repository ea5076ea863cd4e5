package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// ClaimHook implements world.Store. A disposed hook whose retention has
// passed counts as no hook at all, as it does for GetHook.
func (w *World) ClaimHook(_ context.Context, h world.Hook, force bool) (world.Hook, error) {
	var prev world.Hook
	err := w.write(func(s *writeStmts) error {
		held, err := scanHook(s.hookByToken.QueryRow(h.Token))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case expired(held, w.clock.Now()):
		case world.HookBlocks(held, h, w.clock.Now()) && !force:
			prev = held
			return world.ErrHookConflict
		case held.RunID == h.RunID && held.CorrelationID == h.CorrelationID && !held.Disposed:
			return nil // a redelivered claim: the hook stays as first claimed
		default:
			prev = held
		}
		_, err = s.putHook.Exec(h.Token, h.RunID, h.CorrelationID, h.Kind, blobArg(h.Metadata),
			timeArg(h.CreatedAt), boolArg(h.Disposed), timeArg(h.RetainUntil))
		return err
	})
	if err != nil {
		return prev, fmt.Errorf("claim hook: %w", err)
	}
	return prev, nil
}

// expired reports whether a hook record is a disposed one past its
// retention, which blocks nothing and is only waiting to be overwritten.
func expired(h world.Hook, now time.Time) bool {
	return h.Disposed && !h.RetainUntil.After(now)
}

// GetHook implements world.Store.
func (w *World) GetHook(ctx context.Context, token string) (world.Hook, error) {
	h, err := scanHook(w.rs.hook.QueryRowContext(readContext(ctx), token))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && expired(h, w.clock.Now())) {
		return world.Hook{}, fmt.Errorf("hook: %w", world.ErrHookNotFound)
	}
	if err != nil {
		return world.Hook{}, fmt.Errorf("hook: %w", err)
	}
	return h, nil
}

// DisposeHook implements world.Store.
func (w *World) DisposeHook(_ context.Context, token, runID string, retainUntil time.Time) error {
	err := w.write(func(s *writeStmts) error {
		held, err := scanHook(s.hookByToken.QueryRow(token))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		case held.RunID != runID:
			return world.ErrHookNotOwner
		case retainUntil.IsZero():
			_, err = s.deleteHook.Exec(token)
		default:
			_, err = s.disposeHook.Exec(timeArg(retainUntil), token)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("dispose hook: %w", err)
	}
	return nil
}

// scanHook reads a row of hookColumns.
func scanHook(row scanner) (world.Hook, error) {
	var (
		h               world.Hook
		metadata        []byte
		created, retain sql.NullInt64
	)
	if err := row.Scan(&h.Token, &h.RunID, &h.CorrelationID, &h.Kind, &metadata, &created, &h.Disposed, &retain); err != nil {
		return world.Hook{}, err
	}
	h.Metadata, h.CreatedAt, h.RetainUntil = metadata, timeCol(created), timeCol(retain)
	return h, nil
}
