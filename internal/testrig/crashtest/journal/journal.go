// Package journal is the append-only file a crash-test worker writes what
// it did to, synced line by line, so a line survives the SIGKILL that
// follows it and the test reads exactly what ran before the kill.
package journal

import (
	"fmt"
	"os"
	"sync"
)

// Journal appends lines to a file, syncing each.
type Journal struct {
	mu sync.Mutex
	f  *os.File
}

// Open opens the journal at path for appending, creating it if need be.
func Open(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &Journal{f: f}, nil
}

// Note appends one formatted line and syncs it. A failed write is not
// reported: the test reading the journal sees the line missing.
func (j *Journal) Note(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fmt.Fprintf(j.f, format+"\n", args...)
	_ = j.f.Sync()
}
