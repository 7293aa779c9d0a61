//go:build !unix

package collect

// Alive cannot tell here: it says yes, so that no sweep removes anything.
func Alive(pid int) bool { return true }
