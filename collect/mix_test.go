package collect_test

import (
	"bytes"
	"context"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

func TestParseMix(t *testing.T) {
	m, err := collect.ParseMix("ser=0.3, si=0.4 ,rc=0.3")
	require.NoError(t, err)
	require.Equal(t, "ser=0.3,si=0.4,rc=0.3", m.String())
	// Weights are normalised; a bare level weighs 1; SQL names and
	// hyperiso's long names are accepted, any case.
	m, err = collect.ParseMix("SERIALIZABLE=3,snapshot,Read Committed=4")
	require.NoError(t, err)
	require.Equal(t, "ser=0.375,si=0.125,rc=0.5", m.String())
	back, err := collect.ParseMix(m.String())
	require.NoError(t, err)
	require.Equal(t, m, back)
	m, err = collect.ParseMix("ser")
	require.NoError(t, err)
	require.Equal(t, []collect.MixEntry{{Name: "ser", Level: history.SER, Iso: collect.Serializable, Weight: 1}}, m.Entries)

	for spec, msg := range map[string]string{
		"":                   "empty mix",
		"  ":                 "empty mix",
		"ser=0.5,,si=0.5":    "empty entry",
		"=0.5":               "empty entry",
		"ser=0.5,":           "empty entry",
		"ser=0.5,xx=0.5":     `unknown level "xx"`,
		"ser=0.5,ser=0.5":    "ser named twice",
		"ser,serializable=2": "ser named twice",
		"ser=0":              "weight of ser must be a positive number, not \"0\"",
		"ser=-0.5,si=1":      "weight of ser must be a positive number",
		"si=x":               `weight of si must be a positive number, not "x"`,
		"si=":                `weight of si must be a positive number, not ""`,
		"si=NaN":             "weight of si must be a positive number",
		"si=Inf":             "weight of si must be a positive number",
		"si=1e308,rc=1e308":  "weights too large",
		"strict-ser=1":       "strict-ser is an order over the whole history",
	} {
		_, err := collect.ParseMix(spec)
		require.ErrorContains(t, err, msg, "spec %q", spec)
	}
}

// TestMixLevels is the per-transaction mapping: what a transaction drawn
// for each name asks the store for, and what the history records.
func TestMixLevels(t *testing.T) {
	type want struct {
		iso   collect.Isolation
		level history.Level
	}
	cases := map[string]want{
		"ser": {collect.Serializable, history.SER},
		"si":  {collect.Snapshot, history.SI},
		"psi": {collect.Snapshot, history.PSI},
		"pc":  {collect.Snapshot, history.PC},
		"cc":  {collect.Snapshot, history.CC},
		"ra":  {collect.Snapshot, history.RA},
		"rc":  {collect.ReadCommitted, history.RC},
		// SQL levels that promise none of hyperiso's record none.
		"rr": {collect.RepeatableRead, history.LevelNone},
		"ru": {collect.ReadUncommitted, history.LevelNone},
	}
	require.Len(t, collect.MixLevelNames, len(cases))
	for _, name := range collect.MixLevelNames {
		m, err := collect.ParseMix(name)
		require.NoError(t, err, name)
		require.Len(t, m.Entries, 1)
		e := m.Entries[0]
		require.Equal(t, name, e.Name)
		require.Equal(t, cases[name], want{e.Iso, e.Level}, name)
	}
}

func TestMixDraw(t *testing.T) {
	m, err := collect.ParseMix("ser=0.2,si=0.5,rc=0.3")
	require.NoError(t, err)
	draws := func(seed int64, session, n int) []int {
		d := m.Session(seed, session)
		out := make([]int, n)
		for i := range out {
			out[i] = d.Next()
		}
		return out
	}
	require.Equal(t, draws(7, 2, 200), draws(7, 2, 200), "a seed's draws are fixed")
	require.NotEqual(t, draws(7, 2, 200), draws(8, 2, 200), "seeds differ")
	require.NotEqual(t, draws(7, 2, 200), draws(7, 3, 200), "sessions differ")
	const n = 100000
	counts := make([]int, len(m.Entries))
	for _, i := range draws(1, 0, n) {
		counts[i]++
	}
	for i, e := range m.Entries {
		// 5 standard deviations: a correct draw fails about once in
		// 3 million runs.
		sd := math.Sqrt(n * e.Weight * (1 - e.Weight))
		require.InDelta(t, n*e.Weight, float64(counts[i]), 5*sd, "%s drawn %d times of %d", e.Name, counts[i], n)
	}
}

// spy records, per connection in the order opened, the level each
// transaction began at.
type spy struct {
	*memstore.Store
	mu    sync.Mutex
	began [][]collect.Isolation
}

func (s *spy) Connect(ctx context.Context) (collect.Conn, error) {
	c, err := s.Store.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.began = append(s.began, nil)
	return &spyConn{Conn: c, s: s, i: len(s.began) - 1}, nil
}

type spyConn struct {
	collect.Conn
	s *spy
	i int
}

func (c *spyConn) Begin(ctx context.Context, iso collect.Isolation) (collect.Tx, error) {
	c.s.mu.Lock()
	c.s.began[c.i] = append(c.s.began[c.i], iso)
	c.s.mu.Unlock()
	return c.Conn.Begin(ctx, iso)
}

func TestMixedRunOnMemory(t *testing.T) {
	m, err := collect.ParseMix("ser=0.3,si=0.2,cc=0.2,rc=0.2,rr=0.1")
	require.NoError(t, err)
	w := general(t, func(c *workload.Config) { c.Keys, c.Seed = 8, 5 })
	st := &spy{Store: memstore.New(memstore.Options{Seed: 5})}
	h, sum := dbtest.RunMix(t, st, w, m)
	require.Equal(t, "mixed", sum.Isolation)
	require.Equal(t, m.String(), sum.Mix)
	require.Contains(t, sum.String(), "memory at mixed (ser=0.3,si=0.2,cc=0.2,rc=0.2,rr=0.1), workload general")
	require.Contains(t, sum.String(), "by level: ser ")
	// Each session began its transactions at the levels its draw named.
	require.Len(t, st.began, w.Sessions())
	for i, isos := range st.began {
		d := m.Session(w.Config().Seed, i)
		for j, iso := range isos {
			require.Equal(t, m.Entries[d.Next()].Iso, iso, "session %d transaction %d", i+1, j+1)
		}
	}
	// Every level was drawn, and rr's transactions carry none.
	seen := map[history.Level]int{}
	for _, tx := range h.Txns[1:] {
		seen[tx.Level]++
	}
	for _, l := range []history.Level{history.SER, history.SI, history.CC, history.RC, history.LevelNone} {
		require.Positive(t, seen[l], "level %s", l)
	}
	// The same seed gives the same history, byte for byte; another seed
	// other levels.
	again, _ := dbtest.RunMix(t, memstore.New(memstore.Options{Seed: 5}), w, m)
	require.Equal(t, jsonlBytes(t, h), jsonlBytes(t, again))
	other, _ := dbtest.RunMix(t, memstore.New(memstore.Options{Seed: 5}), general(t, func(c *workload.Config) { c.Keys, c.Seed = 8, 6 }), m)
	require.NotEqual(t, levelsOf(h), levelsOf(other))
	// The memory store's levels hold per transaction: its RC transactions
	// never conflict, and the history is read committed throughout.
	res, err := check.Check(context.Background(), h, history.RC, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Satisfied, res.Verdict)
}

func levelsOf(h *history.History) []history.Level {
	var ls []history.Level
	for _, tx := range h.Txns[1:] {
		ls = append(ls, tx.Level)
	}
	return ls
}

func jsonlBytes(t *testing.T, h *history.History) []byte {
	var b bytes.Buffer
	require.NoError(t, jsonl.Write(&b, h))
	return b.Bytes()
}

func TestMixRefusals(t *testing.T) {
	m, err := collect.ParseMix("ser=0.5,ru=0.5")
	require.NoError(t, err)
	st := &faulty{Store: memstore.New(memstore.Options{})}
	_, _, err = collect.Run(context.Background(), st, general(t, nil), collect.Options{Mix: m})
	require.ErrorContains(t, err, "mix level ru: memory store: unsupported isolation read-uncommitted")
	require.Equal(t, int64(1), st.teardowns.Load(), "a refused run is torn down")
	m, err = collect.ParseMix("ser,rc")
	require.NoError(t, err)
	_, _, err = collect.Run(context.Background(), memstore.New(memstore.Options{}), general(t, nil),
		collect.Options{Mix: m, Isolation: collect.Serializable})
	require.ErrorContains(t, err, "an isolation level (serializable) and a mix (ser=0.5,rc=0.5) are exclusive")
	// A run at one level records none, as before.
	h, sum := dbtest.Run(t, memstore.New(memstore.Options{}), general(t, nil), collect.Snapshot)
	require.Empty(t, sum.ByLevel)
	require.Empty(t, sum.Mix)
	require.NotContains(t, h.Meta, "mix")
	for _, tx := range h.Txns {
		require.Equal(t, history.LevelNone, tx.Level)
	}
}
