package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lambdaworkflow/workflow/world/local"
)

// Close waits for everything the World started: once it returns, no
// connection is left open, so the last one's close has checkpointed the
// WAL and deleted it with its shared-memory file, and nothing writes into
// the directory any more (a test's TempDir cleanup would otherwise find it
// not empty). Two things outlived it: the watch for other processes'
// commits, which closed its connection when it next woke, and the writer
// connection, kept open by SQLite for its statements prepared on it.
// Every round opens and closes a World; a leak in any round fails.
func TestCloseLeavesNothingWritingInTheDirectory(t *testing.T) {
	for _, opts := range [][]local.Option{nil, {local.WithFullSync()}} {
		for round := range 20 {
			dir := t.TempDir()
			w, err := local.Open(dir, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			for _, leftover := range []string{"world.db-wal", "world.db-shm"} {
				if _, err := os.Stat(filepath.Join(dir, leftover)); err == nil {
					t.Fatalf("round %d (%d options): %s is still in the directory after Close: a connection outlived it", round, len(opts), leftover)
				}
			}
		}
	}
}
