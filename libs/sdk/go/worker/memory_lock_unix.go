//go:build unix

package worker

import (
	"errors"
	"os"
	"syscall"
)

// errLockHeld: another open file description holds the lock (this process or another).
var errLockHeld = errors.New("lock held")

// lockDir takes a non-blocking exclusive flock on the directory dir; closing the returned file releases it
// (as does the death of the process).
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLockHeld
		}
		return nil, err
	}
	return f, nil
}
