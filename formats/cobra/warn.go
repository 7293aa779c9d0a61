package cobra

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

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

// warner keeps at most maxWarningsPerKind warnings of each kind, in the
// order they are found, and remembers how many it held back.
type warner struct {
	list    []history.Warning
	count   [numKinds]int
	omitted [numKinds]history.Pos // first held-back warning of each kind
}

func (w *warner) add(k warnKind, pos history.Pos, format string, args ...any) {
	w.count[k]++
	if w.count[k] <= maxWarningsPerKind {
		w.list = append(w.list, history.Warning{Pos: pos, Msg: fmt.Sprintf(format, args...)})
	} else if w.count[k] == maxWarningsPerKind+1 {
		w.omitted[k] = pos
	}
}

// keeps reports whether the next warning of kind k will be kept.
func (w *warner) keeps(k warnKind) bool { return w.count[k] < maxWarningsPerKind }

// done returns the warnings kept and one summary per kind that overflowed.
func (w *warner) done() []history.Warning {
	for k, n := range w.count {
		if n > maxWarningsPerKind {
			w.list = append(w.list, history.Warning{Pos: w.omitted[k], Msg: fmt.Sprintf("%d more %s warnings omitted (%d in all), the first of them here",
				n-maxWarningsPerKind, kindNames[k], n)})
		}
	}
	return w.list
}
