package robust

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

func TestRobustPatternSyntax(t *testing.T) {
	p, err := parsePattern("acct[{a}].{b}{{x}}")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, p.params)
	require.Equal(t, []string{"acct[", "].", "{x}"}, p.lits)
	require.Equal(t, "acct[{a}].{b}{{x}}", p.String())
	q := p.bind(map[string]string{"a": "7"})
	require.Equal(t, "acct[7].{b}{{x}}", q.String())
	require.True(t, q.matches("acct[7].balance{x}"))
	require.False(t, q.matches("acct[8].balance{x}"))
	require.True(t, p.bind(map[string]string{"a": "7", "b": "c"}).concrete())
	for _, bad := range []string{"a{", "a}", "a{}", "a{1x}", "{a b}"} {
		_, err := parsePattern(bad)
		require.Error(t, err, bad)
	}
	// Holes match any text, independently; two patterns may be equal
	// when their ends agree.
	r, _ := parsePattern("x{a}y{b}z")
	require.True(t, r.matches("xyz"))
	require.True(t, r.matches("x1y2y3z"))
	require.False(t, r.matches("x1z"))
	s, _ := parsePattern("x{c}")
	u, _ := parsePattern("{c}z")
	v, _ := parsePattern("y{c}")
	require.True(t, r.mayEqual(s))
	require.True(t, r.mayEqual(u))
	require.False(t, r.mayEqual(v))
}

func TestRobustPatternWorkload(t *testing.T) {
	w, err := ReadFile("testdata/transfer.yaml")
	require.NoError(t, err)
	require.Len(t, w.Instances, 4)
	names := func(ks []KeyID) []string {
		var out []string
		for _, k := range ks {
			out = append(out, w.Keys[k])
		}
		return out
	}
	t1 := &w.Instances[0]
	require.Equal(t, "Transfer", t1.Type)
	require.False(t, t1.Patterned)
	require.Equal(t, []string{"acct[1]", "acct[2]"}, names(t1.Writes))
	any := &w.Instances[3]
	require.True(t, any.Patterned)
	// Audit(7, b) reads acct[7] and any account: the pattern may be each
	// of acct[1], acct[2], acct[3].
	require.ElementsMatch(t, []string{"acct[7]", "acct[{b}]", "acct[1]", "acct[2]", "acct[3]"}, names(any.Reads))
	require.ElementsMatch(t, []string{"acct[1]", "acct[2]", "acct[3]"}, names(any.MayReads))
	require.True(t, w.Patterned())
	// Bound, the Audit at PSI is a long-fork reader of T1 and T2: not
	// robust; the pattern one at PC is not a middle.
	rep, err := Check(w, CheckOptions{})
	require.NoError(t, err)
	require.False(t, rep.Robust)
	require.Equal(t, []int32{2}, rep.Culprits)
	// Exact search declines patterns.
	res := Exact(w, rep.Levels, Limits{})
	require.False(t, res.Decided)

	var buf bytes.Buffer
	require.NoError(t, Write(&buf, w))
	back, err := Parse(&buf, "back")
	require.NoError(t, err, buf.String())
	requireSameWorkload(t, w, back)
}

func TestRobustPatternErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"instances": [{"name": "a", "reads": ["x{"]}]}`, `f:1:30: instance "a": key "x{": { without }`},
		{`{"instances": [{"name": "a", "program": "P"}]}`, `f:1:30: instance "a": no program is named "P"`},
		{`{"programs": [{"name": "P", "params": ["a"], "reads": ["x{b}"]}], "instances": []}`, `program "P": key "x{b}" uses parameter "b", which "params" does not declare`},
		{`{"programs": [{"name": "P", "params": ["a"]}], "instances": []}`, `program "P" has no keys`},
		{`{"programs": [{"name": "P", "params": ["a"], "reads": ["x"]}, {"name": "P", "reads": ["y"]}], "instances": []}`, `program "P" is defined twice`},
		{`{"programs": [{"name": "P", "params": ["a"], "reads": ["x{a}"]}], "instances": [{"name": "i", "program": "P", "args": {"b": "1"}}]}`, `program "P" has no parameter "b"`},
		{`{"instances": [{"name": "i", "reads": ["x{a}"], "args": {"b": "1"}}]}`, `argument "b" binds no parameter`},
		{`{"programs": [{"name": "P", "reads": ["x"], "level": "ra"}], "instances": []}`, `unknown field "level" (fields: name, params, reads, writes)`},
	} {
		_, err := Parse(strings.NewReader(c.in), "f")
		require.ErrorContains(t, err, c.want, c.in)
		var ie *InputError
		require.True(t, errors.As(err, &ie), c.in)
	}
}

// TestRobustPatternSoundAgainstOracle: a workload with unbound parameters
// is robust when every binding of them is; whatever Check calls robust
// and whatever Allocate and Refine allocate must pass the oracle under
// every binding. Keys are k0…k(n-1); an instance's pattern k{a} takes
// each of them or a fresh key kn (shared: two patterns may pick the
// same fresh key).
func TestRobustPatternSoundAgainstOracle(t *testing.T) {
	n := cases(t, 1000)
	r := rand.New(rand.NewPCG(5, 6))
	var robustN, patterned int
	for c := range n {
		txs, nkeys := randomWorkload(r)
		// Up to two instances get a pattern read and/or write.
		pat := make([]struct{ read, write bool }, len(txs))
		var withPat []int
		for i := range txs {
			if len(withPat) < 2 && r.IntN(2) == 0 {
				pat[i].read, pat[i].write = r.IntN(2) == 0, r.IntN(2) == 0
				if !pat[i].read && !pat[i].write {
					pat[i].write = true
				}
				withPat = append(withPat, i)
			}
		}
		var sb strings.Builder
		sb.WriteString(`{"instances": [`)
		prev := map[int]string{}
		for i, tx := range txs {
			var reads, writes []string
			for x := range nkeys {
				if tx.reads&(1<<x) != 0 {
					reads = append(reads, fmt.Sprintf("%q", fmt.Sprint("k", x)))
				}
				if tx.writes&(1<<x) != 0 {
					writes = append(writes, fmt.Sprintf("%q", fmt.Sprint("k", x)))
				}
			}
			if pat[i].read {
				reads = append(reads, `"k{a}"`)
			}
			if pat[i].write {
				writes = append(writes, `"k{a}"`)
			}
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `{"name": "T%d", "reads": [%s], "writes": [%s], "level": %q`, i, strings.Join(reads, ","), strings.Join(writes, ","), tx.level.String())
			if tx.sess >= 0 {
				if p, ok := prev[tx.sess]; ok {
					fmt.Fprintf(&sb, `, "after": %q`, p)
				}
				prev[tx.sess] = fmt.Sprint("T", i)
			}
			sb.WriteString("}")
		}
		sb.WriteString("]}")
		w, err := Parse(strings.NewReader(sb.String()), "random")
		require.NoError(t, err, sb.String())
		if w.Patterned() {
			patterned++
		}
		// Every binding: an instance's pattern takes key 0..nkeys.
		bindings := func(levels []history.Level, f func(b []otx) bool) bool {
			var rec func(j int, cur []otx) bool
			rec = func(j int, cur []otx) bool {
				if j == len(withPat) {
					return f(cur)
				}
				i := withPat[j]
				for v := range nkeys + 1 {
					next := append([]otx(nil), cur...)
					if pat[i].read {
						next[i].reads |= 1 << v
					}
					if pat[i].write {
						next[i].writes |= 1 << v
					}
					if !rec(j+1, next) {
						return false
					}
				}
				return true
			}
			return rec(0, withLevels(txs, levels))
		}
		levelsOf := func() []history.Level {
			out := make([]history.Level, len(txs))
			for i := range txs {
				out[i] = txs[i].level
			}
			return out
		}
		allGood := func(levels []history.Level) (string, bool) {
			var bad string
			ok := bindings(levels, func(b []otx) bool {
				// Sessions in the oracle come from sess/idx, kept.
				if ex, isBad := oracleBad(b, nkeys+1); isBad {
					bad = fmt.Sprintf("%s%s", ex, describe(b, nkeys+1))
					return false
				}
				return true
			})
			return bad, ok
		}
		rep, err := Check(w, CheckOptions{})
		require.NoError(t, err)
		if rep.Robust {
			robustN++
			bad, ok := allGood(levelsOf())
			require.True(t, ok, "case %d: Check calls the patterned workload robust; a binding is not: %s\n%s", c, bad, sb.String())
		}
		a := Allocate(w)
		bad, ok := allGood(a.Levels)
		require.True(t, ok, "case %d: Allocate's %v fails for a binding: %s\n%s", c, a.Levels, bad, sb.String())
		refined, _, err := Refine(w, a.Levels)
		require.NoError(t, err)
		bad, ok = allGood(refined)
		require.True(t, ok, "case %d: Refine's %v fails for a binding: %s\n%s", c, refined, bad, sb.String())
	}
	t.Logf("%d workloads (%d with patterns): Check robust %d", n, patterned, robustN)
}
