package main

import (
	"context"
	"fmt"
)

// runIndexMigrator is the AWS World's MigrateRunIndexes.
type runIndexMigrator interface {
	MigrateRunIndexes(ctx context.Context) (int, error)
}

// migrateRunIndexes moves the AWS World's runs written before its listing
// indexes were write-sharded into them, so that they are listed again.
func migrateRunIndexes(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("migrate run-indexes", env)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, err := wf.open(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	m, ok := w.(runIndexMigrator)
	if !ok {
		fmt.Fprintln(env.out, "nothing to migrate: only the AWS World's run listing indexes changed")
		return nil
	}
	moved, err := m.MigrateRunIndexes(ctx)
	if err != nil {
		return fmt.Errorf("moved %d runs, then: %w", moved, err)
	}
	fmt.Fprintf(env.out, "moved %d runs into the write-sharded listing indexes\n", moved)
	return nil
}
