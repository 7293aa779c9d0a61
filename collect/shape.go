package collect

import (
	"context"
	"strings"
	"time"
)

// shape is an error message with its numbers blanked, so that failures that
// differ only by a key, a port or a process id count as the same error.
func shape(err error) string {
	var b strings.Builder
	digits := false
	for _, c := range short(err) {
		d := c >= '0' && c <= '9'
		if !d {
			b.WriteRune(c)
		} else if !digits {
			b.WriteByte('#')
		}
		digits = d
	}
	return b.String()
}

// short shortens an error message for the summary.
func short(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// Sleep waits d, or until ctx ends; the stores' fault injectors use it too.
func Sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
