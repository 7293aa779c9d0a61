package elle_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
)

// sameAsGeneral requires that data reads as with every completion read
// the general way: the same history, warnings included, or the same error.
func sameAsGeneral(t *testing.T, data []byte, opt elle.Options, h *history.History, err error) {
	t.Helper()
	hg, errg := elle.ParseGeneral(data, "fuzz", opt)
	if errg != nil {
		require.EqualError(t, err, errg.Error())
		return
	}
	require.NoError(t, err)
	require.Equal(t, hg, h)
}

// TestFastCompletionAgrees reads random EDN histories of register and
// list-append transactions — mismatched invocations, nil and reserved
// values, writes of nil, list reads, keyword keys, odd spacing, lists for
// vectors, repeated values, failed and indefinite completions — with and
// without the fast completion: histories, warnings and errors must agree.
func TestFastCompletionAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	arg := func() string {
		if rng.IntN(15) == 0 {
			return pick("nil", "-9223372036854775808", "9221120237041090551", "[1 2]", ":k", "1.5", "-0", "123456789012345678", "1234567890123456789", `"s"`)
		}
		return fmt.Sprint(rng.IntN(4))
	}
	mop := func(read bool) (inv, ok string) {
		f := pick(":r", ":w", ":append")
		if rng.IntN(20) == 0 {
			f = pick(":x", `"r"`, ":rr")
		}
		key := fmt.Sprint(rng.IntN(3))
		if rng.IntN(20) == 0 {
			key = pick(":a", "-1", "[1]")
		}
		a := arg()
		open, closer := "[", "]"
		if rng.IntN(10) == 0 {
			open, closer = "(", ")"
		}
		sp := func() string { return pick(" ", " ", ", ", "  ", "\t") }
		okArg := a
		invArg := a
		if f == ":r" {
			invArg = "nil"
			if !read {
				okArg = "nil"
			}
		}
		okKey := key
		if rng.IntN(25) == 0 {
			okKey = fmt.Sprint(rng.IntN(3)) // the completion may name another key
		}
		inv = open + f + sp() + key + sp() + invArg + closer
		ok = open + f + sp() + okKey + sp() + okArg + closer
		if rng.IntN(30) == 0 {
			ok = open + f + sp() + key + closer
		}
		return inv, ok
	}
	for round := range 600 {
		var sb strings.Builder
		for i := range 1 + rng.IntN(12) {
			var inv, ok []string
			for range rng.IntN(4) {
				a, b := mop(rng.IntN(2) == 0)
				inv, ok = append(inv, a), append(ok, b)
			}
			if rng.IntN(15) == 0 && len(ok) > 0 {
				ok = ok[1:]
			}
			proc := rng.IntN(3) + 10*i // one process per transaction: no pairing warnings
			fmt.Fprintf(&sb, "{:type :invoke, :f :txn, :value [%s], :process %d}\n", strings.Join(inv, " "), proc)
			typ := pick(":ok", ":ok", ":ok", ":fail", ":info")
			val := "[" + strings.Join(ok, " ") + "]"
			if rng.IntN(20) == 0 {
				val = pick("nil", "[]")
			}
			fmt.Fprintf(&sb, "{:type %s, :f :txn, :value %s, :process %d}\n", typ, val, proc)
		}
		data := []byte(sb.String())
		for _, opt := range []elle.Options{{}, {Lenient: true}, {Workload: elle.RWRegister, Lenient: round%2 == 0}, {Workload: elle.ListAppend, Lenient: true}} {
			h, err := elle.Parse(bytes.NewReader(data), "fuzz", opt)
			sameAsGeneral(t, data, opt, h, err)
		}
	}
}
