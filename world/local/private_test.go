package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lambdaworkflow/workflow/world/local"
)

// TestANewWorldIsReadableByItsOwnerOnly: the database and the files SQLite
// adds beside it hold every run's payloads, so no other user of the
// machine may read them.
func TestANewWorldIsReadableByItsOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "world")
	w, err := local.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "world.db*"))
	if len(files) < 2 {
		t.Fatalf("found %v; want the database and its write-ahead log", files)
	}
	for _, p := range append(files, dir) {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v; want no access for group and others", p, perm)
		}
	}
}
