//go:build unix

package local

import (
	"os"
	"syscall"
)

// lockExclusive takes an advisory lock on f without waiting; the operating
// system drops it when the process dies, so a killed worker never leaves
// its directory locked.
func lockExclusive(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
