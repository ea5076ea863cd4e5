package local

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockExclusive takes a lock on f's first byte without waiting; Windows
// drops it when the process dies, so a killed worker never leaves its
// directory locked.
func lockExclusive(f *os.File) error {
	const flags = windows.LOCKFILE_EXCLUSIVE_LOCK | windows.LOCKFILE_FAIL_IMMEDIATELY
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped))
}
