//go:build unix

package emulator

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path+".lock" so that a database file is
// opened by at most one running instance at a time (runs-api §10.4). The lock
// is released by unlock, or by the kernel when the process dies (kill -9
// included), so a crashed instance never blocks its successor.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("emulator: lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("emulator: database %s is in use by another running instance", path)
	}
	return func() { f.Close() }, nil
}
