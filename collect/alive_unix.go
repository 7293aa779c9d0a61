//go:build unix

package collect

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether process pid runs on this host (a zombie does
// not). When unsure it says yes: a sweep then leaves what it found.
func Alive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		_, rest, _ := strings.Cut(string(b), ") ")
		if strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X") {
			return false
		}
	}
	return true
}
