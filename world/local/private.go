package local

import (
	"errors"
	"io/fs"
	"os"
)

// createPrivate creates the World's directory and database file readable
// by their owner alone, unless they exist: the file holds every run's
// inputs, outputs and hook tokens' lookup keys, and other users of the
// machine have no business reading it. SQLite gives the files it adds
// beside the database (its write-ahead log and shared-memory index) the
// database file's permissions, so the file is created before SQLite opens
// it. A World created by an older version keeps its permissions.
func createPrivate(dir, path string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
