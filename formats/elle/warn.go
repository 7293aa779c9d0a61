package elle

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

// maxPerKind bounds the warnings kept of each kind, so that a pathological
// file cannot bury the report; a summary line counts the rest.
const maxPerKind = 10

// warner collects warnings by kind.
type warner struct {
	list  []history.Warning
	count map[string]int
	kinds []string
	extra map[string]history.Pos // first warning not shown, per kind
}

func newWarner() *warner {
	return &warner{count: map[string]int{}, extra: map[string]history.Pos{}}
}

func (w *warner) add(kind string, pos history.Pos, msg string) {
	n := w.count[kind] + 1
	w.count[kind] = n
	if n == 1 {
		w.kinds = append(w.kinds, kind)
	}
	switch {
	case n <= maxPerKind:
		w.list = append(w.list, history.Warning{Pos: pos, Msg: msg})
	case n == maxPerKind+1:
		w.extra[kind] = pos
	}
}

func (w *warner) done() []history.Warning {
	for _, k := range w.kinds {
		if n := w.count[k]; n > maxPerKind {
			w.list = append(w.list, history.Warning{Pos: w.extra[k],
				Msg: fmt.Sprintf("%d more warnings like the above (%s) not shown, from here on", n-maxPerKind, k)})
		}
	}
	return w.list
}
