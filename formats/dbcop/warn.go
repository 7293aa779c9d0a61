package dbcop

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

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

// warner keeps at most maxWarningsPerKind warnings of each kind and
// remembers how many it held back. Warnings found while reading and
// those about versions, found after it (parser.versions), are put back
// in the order of the input by their stage: a kind is found in one of
// the two only, so each kind's first maxWarningsPerKind are the same
// whatever the order in which they are found.
type warner struct {
	// stage orders what add records: 0 for the header, 2·id while
	// transaction id is read, 2·id+1 for its events' versions, after
	// every transaction for what the end of the input shows.
	stage   int64
	list    []stagedWarning
	count   [numKinds]int
	omitted [numKinds]history.Pos // first held-back warning of each kind
}

type stagedWarning struct {
	stage int64
	w     history.Warning
}

// stageEnd is the stage of what is found once the whole input is read.
const stageEnd = 1<<63 - 1

func (w *warner) add(k warnKind, pos history.Pos, format string, args ...any) {
	w.count[k]++
	if w.count[k] <= maxWarningsPerKind {
		w.list = append(w.list, stagedWarning{w.stage, history.Warning{Pos: pos, Msg: fmt.Sprintf(format, args...)}})
	} else if w.count[k] == maxWarningsPerKind+1 {
		w.omitted[k] = pos
	}
}

// addLater is add for a warning whose message is not known yet: it
// returns where the warning is in list, for the caller to set its
// message, or -1 if it is held back.
func (w *warner) addLater(k warnKind, pos history.Pos) int {
	w.add(k, pos, "")
	if w.count[k] > maxWarningsPerKind {
		return -1
	}
	return len(w.list) - 1
}

// done returns the kept warnings in input order, then one summary per
// kind that overflowed.
func (w *warner) done() []history.Warning {
	slices.SortStableFunc(w.list, func(a, b stagedWarning) int { return cmp.Compare(a.stage, b.stage) })
	var out []history.Warning
	for _, s := range w.list {
		out = append(out, s.w)
	}
	for k, n := range w.count {
		if n > maxWarningsPerKind {
			out = append(out, history.Warning{Pos: w.omitted[k], Msg: fmt.Sprintf("%d more %s warnings omitted (%d in all), the first of them here",
				n-maxWarningsPerKind, kindNames[k], n)})
		}
	}
	return out
}
