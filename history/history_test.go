package history

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// op is a compact op description for tests: kind, key, value.
type op struct {
	k    OpKind
	x, v int64
}

func r(x, v int64) op { return op{OpRead, x, v} }
func w(x, v int64) op { return op{OpWrite, x, v} }

type txn struct {
	sess   int64
	status Status
	ops    []op
}

func build(init map[int64]int64, txns ...txn) *History {
	b := NewBuilder("test", "test")
	b.SetInit(InitImplicit, 0)
	for x, v := range init {
		b.InitWrite(x, v)
	}
	for i, tx := range txns {
		t := b.Begin(b.Session(tx.sess), int64(i+1), tx.status, Pos{})
		for _, o := range tx.ops {
			switch o.k {
			case OpRead:
				b.Read(t, o.x, o.v)
			case OpWrite:
				b.Write(t, o.x, o.v)
			}
		}
	}
	return b.Finish()
}

func TestBuilderInternsPerKey(t *testing.T) {
	h := build(map[int64]int64{5: 0, 9: 0},
		txn{1, Committed, []op{w(9, 7), r(5, 0)}},
		txn{2, Committed, []op{r(9, 7), w(5, 7)}},
	)
	require.Len(t, h.Txns, 3)
	require.Len(t, h.Sessions, 2)
	require.Equal(t, []int64{5, 9}, []int64{h.Key(h.Txns[0].Ops[0].Key), h.Key(h.Txns[0].Ops[1].Key)}, "init writes sorted by key")
	t1, t2 := h.Txns[1], h.Txns[2]
	require.Equal(t, t1.Ops[0].Key, t2.Ops[0].Key)
	require.Equal(t, t1.Ops[0].Value, t2.Ops[0].Value, "same version interns to the same id")
	require.Equal(t, int64(7), h.Value(t2.Ops[1].Key, t2.Ops[1].Value))
	require.Equal(t, ValueID(1), t2.Ops[1].Value, "values are dense per key: key 5 has 0 then 7")
}

func TestPromoteToInit(t *testing.T) {
	b := NewBuilder("t", "t")
	s0 := b.Session(0)
	init := b.Begin(s0, 0, Committed, Pos{})
	b.Write(init, 1, 0)
	b.Write(init, 2, 0)
	s1 := b.Session(1)
	a := b.Begin(s1, 1, Committed, Pos{})
	b.Read(a, 1, 0)
	b.Write(a, 3, 4)
	b.PromoteToInit(init)
	b.InitAllKeys(0)
	h := b.Finish()
	require.Equal(t, InitExplicit, h.InitKind)
	require.Len(t, h.Sessions, 1)
	require.Equal(t, int64(1), h.Sessions[0].ID)
	require.Len(t, h.Txns, 2)
	require.Equal(t, []TxnID{1}, h.Sessions[0].Txns)
	require.Equal(t, int32(0), h.Txns[1].Session)
	require.Len(t, h.Txns[0].Ops, 3, "explicit writes of keys 1, 2 plus the implicit zero for key 3")
	require.Empty(t, h.Validate())
}

func TestIndexWritersAndReads(t *testing.T) {
	h := build(map[int64]int64{1: 0},
		txn{1, Committed, []op{r(1, 0), w(1, 5), w(1, 6), r(1, 6)}},
		txn{2, Aborted, []op{w(1, 7)}},
		txn{3, Committed, []op{w(1, 6)}},
		txn{4, Unknown, []op{w(1, 6)}},
	)
	ix := h.Index()
	k := h.Txns[1].Ops[0].Key
	v6 := h.Txns[1].Ops[2].Value
	require.Equal(t, []TxnID{1, 3, 4}, ix.Writers(k, v6))
	require.True(t, ix.IntermediateWriter(k, h.Txns[1].Ops[1].Value))
	require.True(t, ix.AbortedWriter(k, h.Txns[2].Ops[0].Value))
	require.Len(t, ix.Reads(1), 1)
	require.Equal(t, []TxnID{3, 4}, ix.Candidates(1, ExtRead{Key: k, Value: v6}))
	require.Empty(t, ix.Writes(2), "aborted transactions install nothing")
	st := h.Stats()
	require.Equal(t, 4, st.Transactions)
	require.Equal(t, 1, st.Aborted)
	require.Equal(t, 1, st.Unknown)
	require.Equal(t, 1, st.DuplicateVersions)
}

func TestValidateFindsEveryKind(t *testing.T) {
	cases := []struct {
		name string
		txns []txn
		want []AnomalyKind
	}{
		{"clean", []txn{{1, Committed, []op{w(1, 1)}}, {2, Committed, []op{r(1, 1), w(1, 2), r(1, 2)}}}, nil},
		{"thin air", []txn{{1, Committed, []op{r(1, 9)}}}, []AnomalyKind{ThinAirRead}},
		{"aborted read", []txn{{1, Aborted, []op{w(1, 1)}}, {2, Committed, []op{r(1, 1)}}}, []AnomalyKind{AbortedRead}},
		{"intermediate read", []txn{{1, Committed, []op{w(1, 1), w(1, 2)}}, {2, Committed, []op{r(1, 1)}}}, []AnomalyKind{IntermediateRead}},
		{"future read", []txn{{1, Committed, []op{r(1, 3), w(1, 3)}}}, []AnomalyKind{FutureRead}},
		{"not own write", []txn{{1, Committed, []op{w(1, 1)}}, {2, Committed, []op{w(1, 2), r(1, 1)}}}, []AnomalyKind{NotOwnWrite}},
		{"not latest own write", []txn{{1, Committed, []op{w(1, 1), w(1, 2), r(1, 1)}}}, []AnomalyKind{NotLatestOwnWrite}},
		{"non-repeatable read", []txn{{1, Committed, []op{w(1, 1)}}, {2, Committed, []op{r(1, 0), r(1, 1)}}}, []AnomalyKind{NonRepeatableRead}},
		{"non-repeatable thin air", []txn{{2, Committed, []op{r(1, 0), r(1, 8)}}}, []AnomalyKind{NonRepeatableRead, ThinAirRead}},
		{"reads of aborted txns do not count", []txn{{1, Aborted, []op{r(1, 9)}}}, nil},
		{"unknown writer is a candidate", []txn{{1, Unknown, []op{w(1, 1)}}, {2, Committed, []op{r(1, 1)}}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := build(map[int64]int64{1: 0}, c.txns...)
			var got []AnomalyKind
			for _, f := range h.Validate() {
				got = append(got, f.Kind)
				require.NotEmpty(t, f.Describe(h))
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestValidateNamesWriters(t *testing.T) {
	h := build(map[int64]int64{1: 0},
		txn{1, Aborted, []op{w(1, 1)}},
		txn{2, Committed, []op{w(1, 4), w(1, 5)}},
		txn{3, Committed, []op{r(1, 1)}},
		txn{3, Committed, []op{r(1, 4)}},
	)
	fs := h.Validate()
	require.Len(t, fs, 2)
	require.Equal(t, AbortedRead, fs[0].Kind)
	require.Equal(t, []TxnID{1}, fs[0].Writers)
	require.Equal(t, IntermediateRead, fs[1].Kind)
	require.Equal(t, []TxnID{2}, fs[1].Writers)
	require.Contains(t, fs[1].Describe(h), "T2(s2#0)")
	require.False(t, NonRepeatableRead.ForbiddenAt(RC))
	require.True(t, NonRepeatableRead.ForbiddenAt(RA))
}

// Every name a finding kind reports is a row of the class table, and the
// rows are unique.
func TestClassTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Classes {
		if seen[c.Name] {
			t.Fatalf("class %s twice", c.Name)
		}
		seen[c.Name] = true
		if c.Adya != "" {
			if _, ok := ClassOf(c.Adya); !ok {
				t.Fatalf("class %s: Adya class %s not in the table", c.Name, c.Adya)
			}
		}
	}
	for k := ThinAirRead; k <= NonRepeatableRead; k++ {
		if !seen[k.String()] {
			t.Fatalf("anomaly kind %s not in the table", k)
		}
	}
	for k := IncompatibleOrder; k <= FutureElement; k++ {
		if !seen[k.String()] {
			t.Fatalf("list finding kind %s not in the table", k)
		}
	}
	if NonRepeatableRead.ForbiddenAt(RC) || !NonRepeatableRead.ForbiddenAt(RA) || !ThinAirRead.ForbiddenAt(RC) {
		t.Fatal("ForbiddenAt does not follow the table")
	}
}
