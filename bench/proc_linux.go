package bench

import "syscall"

// workerAttr makes a worker die with its parent: the kernel sends it
// SIGKILL when the thread that started it exits (runChild keeps that
// thread for the worker's lifetime), whether the parent exits, is killed
// or is ended by SIGTERM.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
