package workload

import (
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustNew(t *testing.T, name string, edit func(c *Config)) *Workload {
	t.Helper()
	c, err := Defaults(name)
	require.NoError(t, err)
	if edit != nil {
		edit(&c)
	}
	w, err := New(name, c)
	require.NoError(t, err)
	return w
}

// all returns every transaction of every session.
func all(w *Workload) [][]Txn {
	out := make([][]Txn, w.Sessions())
	for i := range out {
		g := w.Session(i)
		for range w.TxnsPerSession() {
			out[i] = append(out[i], g.Next())
		}
	}
	return out
}

func TestDefaultsFollowThePaper(t *testing.T) {
	c, err := Defaults("general")
	require.NoError(t, err)
	require.Equal(t, 20, c.Sessions)
	require.Equal(t, 100, c.Txns)
	require.Equal(t, 20, c.Ops)
	require.Equal(t, 0.5, c.Reads)
	require.Equal(t, int64(5000), c.Keys)
	require.Equal(t, 0.5, c.DupKeys)
	require.Equal(t, 0.5, c.Theta)
	require.Equal(t, int64(100), c.ValueSpace)

	for preset, want := range map[string][2]float64{"RH": {0.95, 0.5}, "BL": {0.5, 0.5}, "WH": {0.3, 0.5}, "HD": {0.5, 1.5}, "hd": {0.5, 1.5}} {
		c, _ := Defaults("general")
		require.NoError(t, ApplyPreset(&c, preset))
		require.Equal(t, want[0], c.Reads, preset)
		require.Equal(t, want[1], c.Theta, preset)
		require.Equal(t, strings.ToUpper(preset), c.Preset)
	}
	require.Error(t, ApplyPreset(&c, "XX"))
	_, err = Defaults("tpcc")
	require.ErrorContains(t, err, "unknown workload")
	for _, n := range Names {
		mustNew(t, n, nil)
	}
}

func TestValidation(t *testing.T) {
	bad := map[string]func(c *Config){
		"sessions must be at least 1":     func(c *Config) { c.Sessions = 0 },
		"read proportion":                 func(c *Config) { c.Reads = 1.5 },
		"keys must be at least 1":         func(c *Config) { c.Keys = 0 },
		"duplicate-key proportion":        func(c *Config) { c.DupKeys = -0.1 },
		"theta":                           func(c *Config) { c.Theta = -1 },
		"value space":                     func(c *Config) { c.ValueSpace = 0 },
		"operations per transaction":      func(c *Config) { c.Ops = 0 },
		"rollback rate":                   func(c *Config) { c.RollbackRate = 2 },
		"more than unique values can":     func(c *Config) { c.Txns, c.Ops = 100_000_000, 20 },
		"presets belong to the general":   nil,
		"keys must be even (got 3)":       nil,
		"think time must not be negative": func(c *Config) { c.Think = -time.Second },
	}
	for msg, edit := range bad {
		name, c := "general", Config{}
		switch msg {
		case "presets belong to the general":
			name = "lost-update"
			c, _ = Defaults(name)
			c.Preset = "RH"
		case "keys must be even (got 3)":
			name = "write-skew"
			c, _ = Defaults(name)
			c.Keys = 3
		default:
			c, _ = Defaults(name)
			edit(&c)
		}
		_, err := New(name, c)
		require.ErrorContains(t, err, msg)
	}
}

func TestGeneralShape(t *testing.T) {
	w := mustNew(t, "general", func(c *Config) { c.Sessions, c.Txns, c.Keys = 4, 200, 100 })
	reads, ops := 0, 0
	seen := map[int64]bool{}
	for s, txns := range all(w) {
		seq := int64(0)
		for _, tx := range txns {
			require.Len(t, tx.Ops, 20)
			require.False(t, tx.Rollback)
			for _, op := range tx.Ops {
				require.True(t, op.Key >= 1 && op.Key <= 100, "key %d", op.Key)
				ops++
				if op.Kind == Read {
					reads++
					continue
				}
				require.Equal(t, Write, op.Kind)
				seq++
				if w.DupKey(op.Key) {
					require.True(t, op.Value >= 1 && op.Value <= 100, "repeated value %d", op.Value)
				} else {
					// Unique values encode session and sequence.
					require.Equal(t, int64(s+1)*UniqueBase+seq, op.Value)
					require.False(t, seen[op.Value])
					seen[op.Value] = true
				}
			}
		}
	}
	require.InDelta(t, 0.5, float64(reads)/float64(ops), 0.02)

	dup := 0
	for k := int64(1); k <= 100; k++ {
		if w.DupKey(k) {
			dup++
		}
	}
	require.Equal(t, 50, dup, "exactly ⌊keys·p⌋ keys repeat their values")
	rh := mustNew(t, "general", func(c *Config) { require.NoError(t, ApplyPreset(c, "RH")); c.Sessions, c.Txns = 2, 200 })
	reads, ops = 0, 0
	for _, txns := range all(rh) {
		for _, tx := range txns {
			for _, op := range tx.Ops {
				ops++
				if op.Kind == Read {
					reads++
				}
			}
		}
	}
	require.InDelta(t, 0.95, float64(reads)/float64(ops), 0.02)
}

func TestDeterministicAndTwins(t *testing.T) {
	dup := mustNew(t, "general", func(c *Config) { c.Sessions, c.Txns, c.Keys, c.ValueSpace = 3, 50, 40, 5 })
	again := mustNew(t, "general", func(c *Config) { c.Sessions, c.Txns, c.Keys, c.ValueSpace = 3, 50, 40, 5 })
	uniq := mustNew(t, "general", func(c *Config) { c.Sessions, c.Txns, c.Keys, c.ValueSpace, c.DupKeys = 3, 50, 40, 5, 0 })
	other := mustNew(t, "general", func(c *Config) { c.Sessions, c.Txns, c.Keys, c.ValueSpace, c.Seed = 3, 50, 40, 5, 2 })
	a, b, u, o := all(dup), all(again), all(uniq), all(other)
	require.Equal(t, a, b, "same config, same transactions")
	require.NotEqual(t, a, o, "another seed, other transactions")
	repeated := 0
	for s := range a {
		for i := range a[s] {
			require.Len(t, u[s][i].Ops, len(a[s][i].Ops))
			for j, op := range a[s][i].Ops {
				twin := u[s][i].Ops[j]
				require.Equal(t, op.Kind, twin.Kind)
				require.Equal(t, op.Key, twin.Key)
				if op.Kind == Write && dup.DupKey(op.Key) {
					repeated++
					require.LessOrEqual(t, op.Value, int64(5))
				} else {
					require.Equal(t, op.Value, twin.Value, "unique values coincide in the twin")
				}
			}
		}
	}
	require.Greater(t, repeated, 100)
}

func TestZipf(t *testing.T) {
	z := newZipf(0.5, 100)
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, 101)
	const n = 200_000
	for range n {
		v := z.draw(r)
		require.True(t, v >= 1 && v <= 100)
		counts[v]++
	}
	for _, v := range []int64{1, 2, 10, 100} {
		p := z.prob(v)
		require.InDelta(t, p, float64(counts[v])/n, 4*math.Sqrt(p*(1-p)/n)+1e-4, "value %d", v)
	}
	// θ = 1.5 concentrates on small values; θ = 0 is uniform.
	require.Greater(t, newZipf(1.5, 100).prob(1), 0.35)
	require.InDelta(t, 0.01, newZipf(0, 100).prob(37), 1e-12)
}

func TestBlindWRW(t *testing.T) {
	w := mustNew(t, "blindw-rw", func(c *Config) { c.Sessions, c.Txns = 2, 300 })
	readOnly := 0
	for _, txns := range all(w) {
		for _, tx := range txns {
			require.Len(t, tx.Ops, 8)
			kinds := map[OpKind]bool{}
			for _, op := range tx.Ops {
				kinds[op.Kind] = true
			}
			require.Len(t, kinds, 1, "read-only or write-only")
			if kinds[Read] {
				readOnly++
			}
		}
	}
	require.InDelta(t, 300, readOnly, 60)
}

func TestBaits(t *testing.T) {
	ws := mustNew(t, "write-skew", func(c *Config) { c.Keys, c.Think = 6, time.Millisecond })
	for _, txns := range all(ws) {
		for _, tx := range txns {
			require.Len(t, tx.Ops, 4)
			r1, r2, p, wr := tx.Ops[0], tx.Ops[1], tx.Ops[2], tx.Ops[3]
			require.Equal(t, []OpKind{Read, Read, Pause, Write}, []OpKind{r1.Kind, r2.Kind, p.Kind, wr.Kind})
			require.Equal(t, time.Millisecond, p.Pause)
			pair := []int64{r1.Key, r2.Key}
			slices.Sort(pair)
			require.Equal(t, int64(1), pair[0]%2, "a pair is (2i+1, 2i+2)")
			require.Equal(t, pair[0]+1, pair[1])
			require.Contains(t, pair, wr.Key)
		}
	}
	lu := mustNew(t, "lost-update", func(c *Config) { c.Ops, c.RollbackRate = 2, 0.25 })
	rolled, n := 0, 0
	for _, txns := range all(lu) {
		for _, tx := range txns {
			n++
			if tx.Rollback {
				rolled++
			}
			require.Len(t, tx.Ops, 4)
			require.Equal(t, Read, tx.Ops[0].Kind)
			require.Equal(t, Read, tx.Ops[1].Kind)
			require.Equal(t, Write, tx.Ops[2].Kind)
			require.Equal(t, tx.Ops[0].Key, tx.Ops[2].Key, "read-modify-write")
			require.Equal(t, tx.Ops[1].Key, tx.Ops[3].Key)
		}
	}
	require.InDelta(t, n/4, rolled, float64(n)/10)
}

func TestDescribe(t *testing.T) {
	c, _ := Defaults("general")
	require.NoError(t, ApplyPreset(&c, "HD"))
	w, err := New("general", c)
	require.NoError(t, err)
	require.Equal(t, "preset=HD sessions=20 txns=100 ops=20 reads=0.5 keys=5000 dup-keys=0.5 theta=1.5 value-space=100 seed=1", w.Describe())
	ws := mustNew(t, "write-skew", nil)
	require.Equal(t, "sessions=8 txns=50 keys=2 dup-keys=0 seed=1", ws.Describe())
	require.Equal(t, "write-skew", ws.Name())
	require.Equal(t, int64(2), ws.Keys())
}

// prob returns the probability of value v .
func (z *zipf) prob(v int64) float64 {
	prev := 0.0
	if v > 1 {
		prev = z.cdf[v-2]
	}
	return (z.cdf[v-1] - prev) / z.cdf[len(z.cdf)-1]
}

// TestAppendShape: append's transactions hold 1…Ops appends of unique
// values and list reads, in the proportion asked, on the generation's
// keys; keys retire at about MaxList appends, or never.
func TestAppendShape(t *testing.T) {
	w := mustNew(t, "append", func(c *Config) { c.Sessions, c.Txns, c.Keys, c.MaxList = 10, 200, 10, 32 })
	require.True(t, w.Lists())
	gen := w.ListGeneration()
	// 10 sessions × 2.5 ops × half appends: 12.5 appends per round, 10
	// keys of about 32 appends each: 25 transactions per generation.
	require.Equal(t, 25, gen)
	require.EqualValues(t, 80, w.Keys())
	require.Contains(t, w.Describe(), "keys=10 max-list=32")
	seen := map[int64]bool{}
	perKey := map[int64]int{}
	reads, appends := 0, 0
	sizes := map[int]int{}
	for _, txns := range all(w) {
		for j, tx := range txns {
			require.NotEmpty(t, tx.Ops)
			require.LessOrEqual(t, len(tx.Ops), 4)
			sizes[len(tx.Ops)]++
			lo := int64(j/gen)*10 + 1
			for _, op := range tx.Ops {
				require.GreaterOrEqual(t, op.Key, lo)
				require.Less(t, op.Key, lo+10)
				switch op.Kind {
				case ReadList:
					reads++
				case Append:
					appends++
					perKey[op.Key]++
					require.False(t, seen[op.Value], "unique values")
					seen[op.Value] = true
				default:
					t.Fatalf("append plans %s", op.Kind)
				}
			}
		}
	}
	require.Len(t, sizes, 4, "1 to 4 operations")
	require.InDelta(t, 0.5, float64(reads)/float64(reads+appends), 0.05)
	for k, n := range perKey {
		require.Less(t, n, 2*32, "key %d", k)
	}

	w = mustNew(t, "append", func(c *Config) { c.MaxList = 0 })
	require.Zero(t, w.ListGeneration())
	require.EqualValues(t, 10, w.Keys())
	require.NotContains(t, w.Describe(), "max-list")

	_, err := New("append", Config{Sessions: 1, Txns: 1, Ops: 1, Keys: 1, DupKeys: 0.5, ValueSpace: 10})
	require.ErrorContains(t, err, "dup-keys must be 0")
	_, err = New("append", Config{Sessions: 1, Txns: 1, Ops: 1, Keys: 1, MaxList: -1})
	require.ErrorContains(t, err, "maximum list length")
}

// TestPredicateShape: the predicate workload's operations are reads of one
// row or of a range inside the keys, inserts and moves of unique values,
// deletes, and moves to another key, in about the proportions asked.
func TestPredicateShape(t *testing.T) {
	w := mustNew(t, "predicate", func(c *Config) { c.Sessions, c.Txns, c.Keys = 4, 300, 10 })
	require.True(t, w.Rows())
	require.False(t, w.Lists())
	counts := map[OpKind]int{}
	values := map[int64]bool{}
	for _, txns := range all(w) {
		for _, txn := range txns {
			require.Len(t, txn.Ops, 4)
			for _, op := range txn.Ops {
				counts[op.Kind]++
				require.True(t, op.Key >= 1 && op.Key <= 10, "%+v", op)
				switch op.Kind {
				case Select:
					require.True(t, op.To > op.Key && op.To <= 11 && op.To-op.Key <= 5, "%+v", op)
				case Move:
					require.True(t, op.To >= 1 && op.To <= 10 && op.To != op.Key, "%+v", op)
					fallthrough
				case Insert:
					require.False(t, values[op.Value], "value %d twice", op.Value)
					values[op.Value] = true
				case ReadRow, Delete:
				default:
					t.Fatalf("unexpected %s", op.Kind)
				}
			}
		}
	}
	n := 4 * 300 * 4
	reads := counts[Select] + counts[ReadRow]
	require.InDelta(t, 0.5, float64(reads)/float64(n), 0.05)
	require.InDelta(t, PointReads, float64(counts[ReadRow])/float64(reads), 0.05)
	for _, k := range []OpKind{Insert, Delete, Move} {
		require.InDelta(t, 1.0/6, float64(counts[k])/float64(n), 0.03, k.String())
	}
	_, err := New("predicate", Config{Sessions: 1, Txns: 1, Ops: 1, Keys: 1})
	require.ErrorContains(t, err, "keys must be at least 2")
	require.ErrorContains(t, w.WriteSerial(t.Context(), io.Discard, nil), "no rows")
}

// TestRWRegisterShape: rw-register plans append's transactions over
// registers: 1 to 4 reads and writes of unique values on the keys of the
// transaction's generation, about 32 writes per key.
func TestRWRegisterShape(t *testing.T) {
	w := mustNew(t, "rw-register", func(c *Config) { c.Sessions, c.Txns, c.Keys, c.MaxList = 10, 200, 10, 32 })
	require.False(t, w.Lists())
	gen := w.ListGeneration()
	require.Equal(t, 25, gen)
	require.EqualValues(t, 80, w.Keys())
	require.Contains(t, w.Describe(), "reads=0.5 keys=10 max-list=32 dup-keys=0")
	seen := map[int64]bool{}
	perKey := map[int64]int{}
	reads, writes := 0, 0
	for _, txns := range all(w) {
		for j, tx := range txns {
			require.NotEmpty(t, tx.Ops)
			require.LessOrEqual(t, len(tx.Ops), 4)
			lo := int64(j/gen)*10 + 1
			for _, op := range tx.Ops {
				require.GreaterOrEqual(t, op.Key, lo)
				require.Less(t, op.Key, lo+10)
				switch op.Kind {
				case Read:
					reads++
				case Write:
					writes++
					perKey[op.Key]++
					require.False(t, seen[op.Value], "unique values")
					seen[op.Value] = true
				default:
					t.Fatalf("rw-register plans %s", op.Kind)
				}
			}
		}
	}
	require.InDelta(t, 0.5, float64(reads)/float64(reads+writes), 0.05)
	for k, n := range perKey {
		require.Less(t, n, 2*32, "key %d", k)
	}
	_, err := New("rw-register", Config{Sessions: 1, Txns: 1, Ops: 1, Keys: 1, DupKeys: 0.5, ValueSpace: 10})
	require.ErrorContains(t, err, "rw-register writes unique values")
}
