package history

import "fmt"

// Rel is the relation a dependency edge between two transactions stands
// for: one vocabulary for both engines, anomaly and explain.
type Rel uint8

const (
	// SO is session order (T⊥ precedes every session's first transaction).
	SO Rel = iota
	// WR is read-from: the edge's target read the source's write of its
	// key.
	WR
	// WW is version order: the target overwrote the source's write of the
	// key.
	WW
	// RW is anti-dependency: the source read a version of the key that
	// the target overwrote.
	RW
	// RT is real-time order: the source completed before the target was
	// invoked (strict serializability).
	RT
	// CO is commit order a weak level's axiom forces (weak's saturation):
	// the premise is the edge's rule, not a read or write of the two.
	CO
)

var relNames = [...]string{"so", "wr", "ww", "rw", "rt", "co"}

// String is the short name reports and pictures use.
func (r Rel) String() string {
	if int(r) < len(relNames) {
		return relNames[r]
	}
	return fmt.Sprintf("Rel(%d)", r)
}
