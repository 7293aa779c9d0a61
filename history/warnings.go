package history

import "fmt"

// MaxWarningsPerKind bounds the warnings a WarningLog keeps of one kind, so
// that a pathological file cannot bury the report.
const MaxWarningsPerKind = 10

// WarningLog collects a reader's warnings by kind, keeping the first
// MaxWarningsPerKind of each and, at the end, one line that counts the rest.
type WarningLog struct {
	list  []Warning
	count map[string]int
	kinds []string
	extra map[string]Pos // first warning not kept, per kind
}

// Add records a warning of the given kind.
func (w *WarningLog) Add(kind string, pos Pos, format string, args ...any) {
	if w.count == nil {
		w.count, w.extra = map[string]int{}, map[string]Pos{}
	}
	n := w.count[kind] + 1
	w.count[kind] = n
	if n == 1 {
		w.kinds = append(w.kinds, kind)
	}
	switch {
	case n <= MaxWarningsPerKind:
		w.list = append(w.list, Warning{Pos: pos, Msg: fmt.Sprintf(format, args...)})
	case n == MaxWarningsPerKind+1:
		w.extra[kind] = pos
	}
}

// Done returns the kept warnings and one summary per kind that overflowed.
func (w *WarningLog) Done() []Warning {
	for _, k := range w.kinds {
		if n := w.count[k]; n > MaxWarningsPerKind {
			w.list = append(w.list, Warning{Pos: w.extra[k],
				Msg: fmt.Sprintf("%d more warnings like the above (%s) not shown, from here on", n-MaxWarningsPerKind, k)})
		}
	}
	return w.list
}
