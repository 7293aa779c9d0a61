package dbcop

import "github.com/hyperiso/hyperiso/history"

type warnKind uint8

const (
	kindBool warnKind = iota
	kindUTF8
	kindTime
	kindTrailing
	kindWorkload
	kindParams
	kindDupWrite
	kindZeroWrite
	kindAbortedRead
	kindThinAir
	kindFailedInCommitted
	numKinds
)

var kindNames = [numKinds]string{
	"boolean byte", "invalid UTF-8", "timestamp", "trailing bytes", "workload", "params",
	"duplicate write", "write of 0", "aborted read", "thin-air read", "failed events in a committed transaction",
}

// warner passes warnings to the builder, at most maxWarningsPerKind of each
// kind, and remembers how many it held back.
type warner struct {
	b       *history.Builder
	count   [numKinds]int
	omitted [numKinds]history.Pos // first held-back warning of each kind
}

func (w *warner) add(k warnKind, pos history.Pos, format string, args ...any) {
	w.count[k]++
	if w.count[k] <= maxWarningsPerKind {
		w.b.Warn(pos, format, args...)
	} else if w.count[k] == maxWarningsPerKind+1 {
		w.omitted[k] = pos
	}
}

// flush adds one summary warning per kind that overflowed.
func (w *warner) flush() {
	for k, n := range w.count {
		if n > maxWarningsPerKind {
			w.b.Warn(w.omitted[k], "%d more %s warnings omitted (%d in all), the first of them here",
				n-maxWarningsPerKind, kindNames[k], n)
		}
	}
}
