package elle_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/elle"
)

// pendingHistory writes a random EDN history in which processes invoke
// again while earlier invocations are pending (up to four each), one
// process is rarely scheduled, so that its completions lie far after
// their invocations, and some invocations never complete. Its layout
// varies as Jepsen's and hand-written files do: two maps on a line (in
// some histories, so that chunks hold more maps than lines, or not),
// maps over several lines, comments, tagged maps the fast path leaves to
// the EDN decoder, nemesis operations, keyword processes, and now and
// then an :ok without :value (an error in strict mode).
func pendingHistory(rng *rand.Rand) string {
	procs := 1 + rng.IntN(6)
	keys := 1 + rng.IntN(8)
	register := rng.IntN(2) == 0
	sameLine := rng.IntN(3) == 0 // some histories put two maps on a line
	type mop struct {
		f    string
		k, v int
	}
	pending := make([][][]mop, procs)
	var sb strings.Builder
	index, next := 0, 1
	procName := func(p int) string {
		if p == procs-1 && procs > 2 {
			return ":late" // a keyword process
		}
		return fmt.Sprint(p)
	}
	emit := func(typ string, p int, ops []mop, withValue bool) {
		var m strings.Builder
		fmt.Fprintf(&m, "{:type :%s, :f :txn", typ)
		if withValue {
			m.WriteString(", :value [")
			for i, o := range ops {
				if i > 0 {
					m.WriteByte(' ')
				}
				switch {
				case o.f != "r":
					fmt.Fprintf(&m, "[:%s %d %d]", o.f, o.k, o.v)
				case typ != "ok":
					fmt.Fprintf(&m, "[:r %d nil]", o.k)
				case register:
					fmt.Fprintf(&m, "[:r %d %d]", o.k, rng.IntN(5))
				default:
					fmt.Fprintf(&m, "[:r %d [%d %d]]", o.k, rng.IntN(5), rng.IntN(5))
				}
			}
			m.WriteString("]")
		}
		fmt.Fprintf(&m, ", :process %s, :index %d, :time %d}", procName(p), index, 1000+index)
		index++
		s := m.String()
		switch rng.IntN(20) {
		case 0:
			s = strings.Replace(s, ", :process", "\n :process", 1)
		case 1:
			s = "#jepsen.history.Op" + s
		case 2:
			s = "; a comment, with [brackets {\n" + s
		}
		sb.WriteString(s)
		if sameLine && rng.IntN(4) == 0 {
			sb.WriteByte(' ')
		} else {
			sb.WriteByte('\n')
		}
	}
	steps := 20 + rng.IntN(200)
	for range steps {
		if rng.IntN(40) == 0 {
			sb.WriteString("{:type :info, :f :start-partition, :process :nemesis, :value nil}\n")
		}
		p := rng.IntN(procs)
		if p == 0 && procs > 1 && rng.IntN(10) != 0 {
			p = 1 + rng.IntN(procs-1) // process 0 is rarely scheduled
		}
		if len(pending[p]) == 0 || len(pending[p]) < 4 && rng.IntN(3) == 0 {
			ops := make([]mop, 1+rng.IntN(3))
			for i := range ops {
				ops[i] = mop{f: "r", k: rng.IntN(keys)}
				if rng.IntN(2) == 0 {
					ops[i].f, ops[i].v = "append", next
					if register {
						ops[i].f = "w"
					}
					next++
				}
			}
			pending[p] = append(pending[p], ops)
			emit("invoke", p, ops, true)
			continue
		}
		ops := pending[p][0]
		pending[p] = pending[p][1:]
		switch r := rng.IntN(20); {
		case r < 2:
			emit("fail", p, ops, true)
		case r < 4:
			emit("info", p, ops, rng.IntN(2) == 0)
		case r < 5 && rng.IntN(4) == 0:
			emit("ok", p, ops, false)
		default:
			emit("ok", p, ops, true)
		}
	}
	return sb.String()
}

// randomCuts cuts data for decodeEDN's chunks: mostly at line starts, as
// chunkStarts does, sometimes anywhere (inside a map or a comment).
func randomCuts(rng *rand.Rand, data []byte) []int {
	cuts := []int{0}
	for range 1 + rng.IntN(6) {
		c := rng.IntN(len(data) + 1)
		if rng.IntN(4) != 0 {
			if j := bytes.IndexByte(data[c:], '\n'); j >= 0 {
				c += j + 1
			}
		}
		cuts = append(cuts, c)
	}
	cuts = append(cuts, len(data))
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// TestChunkedDecodeMatchesWhole: decoded in chunks cut at random places,
// as a large file is decoded in parallel, a history reads exactly as in
// one sequential run — the same transactions, operations, positions,
// intervals and warnings, or the same error — also when a process has
// several invocations pending, when a completion lies chunks after its
// invocation, and when chunks hold more maps than lines.
func TestChunkedDecodeMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	histories, errs := 0, 0
	for i := range 250 {
		data := []byte(pendingHistory(rng))
		for _, lenient := range []bool{false, true} {
			opt := elle.Options{Lenient: lenient}
			want, wantErr := elle.ParseCut(data, "cut.edn", opt, nil)
			if wantErr == nil {
				histories++
				require.NoError(t, want.CheckInvariants())
			} else {
				errs++
			}
			for range 4 {
				cuts := randomCuts(rng, data)
				got, err := elle.ParseCut(data, "cut.edn", opt, cuts)
				if wantErr != nil {
					require.EqualError(t, err, wantErr.Error(), "history %d cuts %v", i, cuts)
					continue
				}
				require.NoError(t, err, "history %d cuts %v", i, cuts)
				require.Equal(t, want, got, "history %d lenient %v cuts %v", i, lenient, cuts)
			}
		}
	}
	require.Greater(t, histories, 300)
	require.Greater(t, errs, 40)
}
