package cobra

import "github.com/hyperiso/hyperiso/history"

type warnKind uint8

const (
	kindFlavour warnKind = iota
	kindEmpty
	kindOpen
	kindDupValue
	kindInitConflict
	kindBadInitWid
	kindGC
	kindOwnRead
	kindThinAir
	numKinds
)

var kindNames = [numKinds]string{
	"flavour", "empty log", "open transaction", "duplicate value", "conflicting initial value",
	"INIT/NULL writer with another write id", "garbage-collector read", "read of own transaction", "thin-air read",
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
