//go:build !linux

package bench

import "syscall"

// workerAttr: elsewhere a worker outlives a parent killed by a signal it
// cannot catch.
func workerAttr() *syscall.SysProcAttr { return nil }
