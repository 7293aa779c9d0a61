package formats

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/awdit"
	"github.com/hyperiso/hyperiso/formats/cobra"
	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/text"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
)

// everything builds a history with one of each thing some format lacks.
func everything() *history.History {
	b := history.NewBuilder("mem", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitWrite(1, 0)
	s := b.Session(1)
	t1 := b.Begin(s, 1, history.Committed, history.Pos{})
	b.Write(t1, 1, 5)
	b.SetLevel(t1, history.SI)
	b.SetInterval(t1, 1, 2)
	t2 := b.Begin(s, 2, history.Aborted, history.Pos{})
	b.Write(t2, 1, 6)
	t3 := b.Begin(b.Session(2), 3, history.Unknown, history.Pos{})
	b.Read(t3, 1, 5)
	t4 := b.Begin(b.Session(3), 4, history.Committed, history.Pos{})
	b.Append(t4, 2, 7)
	t5 := b.Begin(b.Session(4), 5, history.Committed, history.Pos{})
	b.Write(t5, 1, 5) // a second write of (1, 5)
	b.Write(t5, -3, 1)
	b.AbortedWrite(1, 9)
	b.VersionHint(1, 0, 5)
	b.Drop(history.Dropped{Ops: 2})
	return b.Finish()
}

// TestWritersNameWhatTheyCannotHold: each writer refuses the history with
// ErrCannotHold and names every feature its format lacks, and nothing else.
func TestWritersNameWhatTheyCannotHold(t *testing.T) {
	h := everything()
	const (
		aborted  = "1 aborted transactions (first: T2(s1#1))"
		unknown  = "1 transactions of unknown outcome (first: T3(s2#0))"
		uReads   = "transactions of unknown outcome with reads"
		lists    = "1 transactions with list-append operations (first: T4(s3#0))"
		regs     = "register reads or writes among list-append ones"
		timed    = "1 transactions with real-time intervals (first: T1(s1#0))"
		someTime = "real-time intervals on 1 transactions but not on 4"
		levels   = "1 transactions with a declared isolation level (first: T1(s1#0))"
		abWrites = "1 aborted writes outside any transaction (first: key 1 value 9)"
		hints    = "1 stated version orders"
		dropped  = "lenient reading dropped 2 operations"
		negative = "negative"
		dup      = "1 repeated writes of a value (first: key 1 value 5 by T1(s1#0) and T5(s4#0)"
	)
	all := []string{aborted, unknown, uReads, lists, regs, timed, someTime, levels, abWrites, hints, dropped, negative, dup}
	stream := func(w func(io.Writer, *history.History) error) func() error {
		return func() error {
			var buf bytes.Buffer
			err := w(&buf, h)
			require.Zero(t, buf.Len(), "a refusal writes nothing")
			return err
		}
	}
	cases := []struct {
		name  string
		write func() error
		want  []string
	}{
		{"dbcop", stream(dbcop.Write), []string{unknown, lists, timed, levels, hints, dropped}},
		{"text", stream(text.Write), []string{unknown, lists, timed, levels, hints, dropped}},
		{"awdit", stream(awdit.Write), []string{aborted, unknown, lists, timed, levels, abWrites, hints, dropped}},
		{"edn", stream(elle.Write), []string{uReads, regs, someTime, levels, hints, dropped}},
		{"viper", func() error {
			return viper.Write(filepath.Join(t.TempDir(), "v"), h)
		}, []string{aborted, unknown, lists, timed, levels, hints, dropped}},
		{"cobra", func() error {
			return cobra.Write(filepath.Join(t.TempDir(), "c"), h, cobra.WriteOptions{})
		}, []string{aborted, unknown, lists, timed, levels, abWrites, hints, dropped, dup}},
	}
	for _, c := range cases {
		err := c.write()
		require.ErrorIs(t, err, ErrCannotHold, c.name)
		for _, s := range all {
			if contains(c.want, s) {
				require.Contains(t, err.Error(), s, c.name)
			} else {
				require.NotContains(t, err.Error(), s, c.name)
			}
		}
	}
	// JSONL holds all of it.
	require.NoError(t, jsonl.Write(io.Discard, h))
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestWritersRenameInitialValues: a history whose initial values are not
// the format's (Cobra value identities, a key without an initial value
// that reads 0) is written with values renamed per key, and reads back
// with the same reads-from.
func TestWritersRenameInitialValues(t *testing.T) {
	b := history.NewBuilder("mem", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitWrite(1, 40)
	s := b.Session(1)
	t1 := b.Begin(s, 1, history.Committed, history.Pos{})
	b.Read(t1, 1, 40) // T⊥'s value
	b.Write(t1, 1, 0) // the format's initial value, written
	b.Read(t1, 2, 0)  // key 2 has no initial value: a thin-air read
	b.Write(t1, 2, 1) // and 1, which the renaming must not pick for 0
	t2 := b.Begin(b.Session(2), 2, history.Committed, history.Pos{})
	b.Read(t2, 1, 0)
	h := b.Finish()
	for name, w := range map[string]func(io.Writer, *history.History) error{
		"history.bincode": dbcop.Write, "h.txt": text.Write, "h.awdit": awdit.Write, "h.edn": elle.Write,
	} {
		var buf bytes.Buffer
		require.NoError(t, w(&buf, h), name)
		h2, err := ReadStream(&buf, name, Options{})
		require.NoError(t, err, name)
		require.Len(t, h2.Txns, 3, name)
		require.Len(t, h2.Txns[1].Ops, 4, name)
		r := h2.Txns[1].Ops
		init := h2.Txns[history.InitTxn].Ops
		var initVal history.ValueID = -1
		for _, op := range init {
			if op.Key == r[0].Key {
				initVal = op.Value
			}
			if op.Key == r[2].Key {
				require.NotEqual(t, op.Value, r[2].Value, "%s: the thin-air read of key 2 reads T⊥", name)
			}
		}
		require.Equal(t, initVal, r[0].Value, "%s: the read of T⊥'s value", name)
		require.NotEqual(t, r[0].Value, r[1].Value, "%s: the write of 0 is not T⊥'s", name)
		require.Equal(t, r[1].Value, h2.Txns[2].Ops[0].Value, "%s: T2 reads T1's write", name)
	}
}

// TestTextRenamesNegatives: text has no sign, so negative keys and values
// are written as non-negative ones nothing else uses, consistently.
func TestTextRenamesNegatives(t *testing.T) {
	b := history.NewBuilder("mem", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitWrite(-5, -7)
	b.InitWrite(0, 0)
	s := b.Session(1)
	t1 := b.Begin(s, 1, history.Committed, history.Pos{})
	b.Read(t1, -5, -7)
	b.Write(t1, -5, -1)
	b.Write(t1, 0, -1)
	t2 := b.Begin(b.Session(2), 2, history.Committed, history.Pos{})
	b.Read(t2, -5, -1)
	b.Read(t2, 0, -1)
	b.Read(t2, 0, 0)
	h := b.Finish()
	var buf bytes.Buffer
	require.NoError(t, text.Write(&buf, h))
	require.NotContains(t, buf.String(), "-")
	h2, err := ReadStream(&buf, "h.txt", Options{})
	require.NoError(t, err)
	require.Equal(t, len(h.Keys), len(h2.Keys))
	r1, w1, r2 := h2.Txns[1].Ops, h2.Txns[1].Ops[1:], h2.Txns[2].Ops
	require.Equal(t, w1[0].Value, r2[0].Value, "T2 reads T1's write of the renamed key")
	require.Equal(t, w1[1].Value, r2[1].Value, "T2 reads T1's write of key 0")
	require.NotEqual(t, r2[1].Value, r2[2].Value)
	for _, op := range h2.Txns[history.InitTxn].Ops {
		if op.Key == r1[0].Key {
			require.Equal(t, op.Value, r1[0].Value, "T1 reads T⊥'s value")
		}
		if op.Key == r2[2].Key {
			require.Equal(t, op.Value, r2[2].Value, "T2 reads T⊥'s value of key 0")
		}
	}
}

// TestRowWritersRefuseValueTests: Viper writes predicate reads but has no
// value tests, and EDN has only Elle's ([:= v], [:mod m r]); a read with
// another would come back as a read of every value of its range, so they
// refuse it, naming it, and JSONL holds it.
func TestRowWritersRefuseValueTests(t *testing.T) {
	const in = `{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["insert",0,10],["insert",1,20]]}
{"session":2,"id":2,"ops":[["select",{"keys":[0,2],"in":[10,30]},[[0,10]]]]}
`
	h, err := ReadStream(bytes.NewReader([]byte(in)), "vt.jsonl", Options{})
	require.NoError(t, err)
	err = elle.Write(io.Discard, h)
	require.ErrorIs(t, err, ErrCannotHold)
	require.Contains(t, err.Error(), "value test")
	err = viper.Write(filepath.Join(t.TempDir(), "v"), h)
	require.ErrorIs(t, err, ErrCannotHold)
	require.Contains(t, err.Error(), "value test")
	require.NoError(t, jsonl.Write(io.Discard, h))
}
