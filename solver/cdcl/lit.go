package cdcl

import (
	"fmt"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// lit is the internal literal encoding: variable index v (0-based) times two,
// plus one for the negative literal. p^1 is the negation of p, and p
// indexes per-literal arrays directly.
type lit uint32

const litUndef lit = ^lit(0)

// toLit converts a public literal; it panics on the zero literal.
func toLit(l cnf.Lit) lit {
	switch {
	case l > 0:
		return lit(uint32(l-1) << 1)
	case l < 0:
		return lit(uint32(-l-1)<<1 | 1)
	}
	panic("cdcl: 0 is not a literal")
}

// ext converts back to the public encoding.
func (p lit) ext() cnf.Lit {
	v := cnf.Lit(p>>1) + 1
	if p&1 != 0 {
		return -v
	}
	return v
}

// v is the 0-based variable index.
func (p lit) v() uint32 { return uint32(p >> 1) }

func (p lit) String() string { return fmt.Sprint(p.ext()) }

// Values of literals in the per-literal value array.
const (
	valUndef int8 = 0
	valTrue  int8 = 1
	valFalse int8 = -1
)
