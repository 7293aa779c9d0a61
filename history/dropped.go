package history

import (
	"fmt"
	"strings"
)

// Dropped counts what a lenient reader skipped of its input, so that a
// verdict can say it was reached without it. Transactions and operations are
// counted where the reader knew what it skipped; Other counts the lines,
// records and fields it skipped without knowing (an unreadable line may have
// held a transaction).
type Dropped struct {
	Txns  int `json:"transactions"`
	Ops   int `json:"operations"`
	Other int `json:"other"`
}

// Any reports whether anything was dropped.
func (d Dropped) Any() bool { return d != Dropped{} }

// Reported is what a report carries: nil when nothing was dropped.
func (d Dropped) Reported() *Dropped {
	if !d.Any() {
		return nil
	}
	return &d
}

// String says what was dropped, e.g. "1 transaction, 3 operations and 2
// other input items".
func (d Dropped) String() string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{d.Txns, "transaction"}, {d.Ops, "operation"}, {d.Other, "other input item"}} {
		if c.n == 1 {
			parts = append(parts, "1 "+c.what)
		} else if c.n > 1 {
			parts = append(parts, fmt.Sprintf("%d %ss", c.n, c.what))
		}
	}
	switch len(parts) {
	case 0:
		return "nothing"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Drop adds d to what the history records its reader dropped.
func (b *Builder) Drop(d Dropped) {
	b.h.Dropped.Txns += d.Txns
	b.h.Dropped.Ops += d.Ops
	b.h.Dropped.Other += d.Other
}
