package dbcop

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// ---- an encoder for test inputs (§2.2) ----

type ev struct {
	write bool
	key   uint64
	value uint64
	ok    bool
}

type tx struct {
	evs []ev
	ok  bool
}

type file struct {
	params           [5]uint64
	info, start, end string
	sessions         [][]tx
}

func w(k, v uint64) ev  { return ev{true, k, v, true} }
func r(k, v uint64) ev  { return ev{false, k, v, true} }
func fw(k, v uint64) ev { return ev{true, k, v, false} }
func fr(k uint64) ev    { return ev{false, k, 0, false} }

func (f file) bytes() []byte {
	var b []byte
	u := func(x uint64) { b = binary.LittleEndian.AppendUint64(b, x) }
	bo := func(x bool) {
		if x {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	for _, p := range f.params {
		u(p)
	}
	for _, s := range []string{f.info, f.start, f.end} {
		u(uint64(len(s)))
		b = append(b, s...)
	}
	u(uint64(len(f.sessions)))
	for _, s := range f.sessions {
		u(uint64(len(s)))
		for _, t := range s {
			u(uint64(len(t.evs)))
			for _, e := range t.evs {
				bo(e.write)
				u(e.key)
				u(e.value)
				bo(e.ok)
			}
			bo(t.ok)
		}
	}
	return b
}

func simple() file {
	return file{
		params: [5]uint64{0, 2, 2, 1, 2},
		info:   "test", start: "2024-01-01T00:00:00Z", end: "2024-01-01T00:00:01Z",
		sessions: [][]tx{
			{{evs: []ev{w(1, 1), r(2, 0)}, ok: true}},
			{{evs: []ev{r(1, 1), w(2, 5)}, ok: true}},
		},
	}
}

// demo is a 251-byte dbcop history (docs/formats.md, dbcop), as printed by xxd.
const demoDump = `
00000000: 0000 0000 0000 0000 0100 0000 0000 0000  ................
00000010: 0200 0000 0000 0000 0300 0000 0000 0000  ................
00000020: 0200 0000 0000 0000 0400 0000 0000 0000  ................
00000030: 6465 6d6f 1900 0000 0000 0000 3230 3234  demo........2024
00000040: 2d30 312d 3031 5430 303a 3030 3a30 302b  -01-01T00:00:00+
00000050: 3030 3a30 3019 0000 0000 0000 0032 3032  00:00........202
00000060: 342d 3031 2d30 3154 3030 3a30 303a 3031  4-01-01T00:00:01
00000070: 2b30 303a 3030 0100 0000 0000 0000 0300  +00:00..........
00000080: 0000 0000 0000 0200 0000 0000 0000 0101  ................
00000090: 0000 0000 0000 0001 0000 0000 0000 0001  ................
000000a0: 0002 0000 0000 0000 0000 0000 0000 0000  ................
000000b0: 0001 0101 0000 0000 0000 0001 0200 0000  ................
000000c0: 0000 0000 0100 0000 0000 0000 0100 0200  ................
000000d0: 0000 0000 0000 0001 0000 0000 0000 0001  ................
000000e0: 0000 0000 0000 0001 0002 0000 0000 0000  ................
000000f0: 0000 0000 0000 0000 0000 01              ...........
`

func fromXXD(t testing.TB, dump string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(strings.TrimSpace(dump), "\n") {
		_, rest, ok := strings.Cut(line, ": ")
		require.True(t, ok, line)
		hexPart := rest[:min(len(rest), 40)]
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(hexPart), " ", ""))
		require.NoError(t, err, line)
		out = append(out, b...)
	}
	return out
}

func demo(t testing.TB) []byte {
	b := fromXXD(t, demoDump)
	require.Len(t, b, 251)
	return b
}

func parse(t testing.TB, data []byte, opt Options) (*history.History, error) {
	t.Helper()
	h, err := Parse(bytes.NewReader(data), "mem.bincode", int64(len(data)), opt)
	if err == nil {
		checkConsistent(t, h)
	}
	return h, err
}

// ---- checks ----

type counts struct {
	sessions, committed, aborted, unknown, writes, reads, init, abortedWrites int
}

func count(h *history.History) counts {
	c := counts{sessions: len(h.Sessions), init: len(h.Txns[history.InitTxn].Ops), abortedWrites: len(h.AbortedWrites)}
	for _, tx := range h.Txns[1:] {
		switch tx.Status {
		case history.Committed:
			c.committed++
		case history.Aborted:
			c.aborted++
		default:
			c.unknown++
		}
		for _, op := range tx.Ops {
			if op.Kind == history.OpWrite {
				c.writes++
			} else {
				c.reads++
			}
		}
	}
	return c
}

// opsString renders a transaction's ops with raw keys and values.
func opsString(h *history.History, t history.TxnID) string {
	var parts []string
	for _, op := range h.Txns[t].Ops {
		parts = append(parts, fmt.Sprintf("%s(%d,%d)", strings.ToUpper(op.Kind.String()), h.Key(op.Key), h.Value(op.Key, op.Value)))
	}
	return strings.Join(parts, " ")
}

// checkConsistent asserts the invariants every reader's History must keep.
func checkConsistent(t testing.TB, h *history.History) {
	t.Helper()
	require.NotEmpty(t, h.Txns)
	require.Equal(t, int32(-1), h.Txns[0].Session)
	require.Len(t, h.Values, len(h.Keys))
	seen := make(map[int64]bool)
	for _, k := range h.Keys {
		require.False(t, seen[k], "key %d interned twice", k)
		seen[k] = true
	}
	n := 1
	for si, s := range h.Sessions {
		for i, id := range s.Txns {
			require.True(t, id > 0 && int(id) < len(h.Txns))
			require.Equal(t, int32(si), h.Txns[id].Session)
			require.Equal(t, int32(i), h.Txns[id].Index)
			n++
		}
	}
	require.Equal(t, len(h.Txns), n, "every transaction is in exactly one session")
	ids := make(map[int64]bool)
	for ti, tx := range h.Txns {
		if ti > 0 {
			require.False(t, ids[tx.ID], "duplicate txn id %d", tx.ID)
			ids[tx.ID] = true
			require.LessOrEqual(t, tx.Status, history.Unknown)
		}
		for _, op := range tx.Ops {
			require.True(t, op.Kind == history.OpRead || op.Kind == history.OpWrite)
			require.True(t, op.Key >= 0 && int(op.Key) < len(h.Keys))
			require.True(t, op.Value >= 0 && int(op.Value) < len(h.Values[op.Key]))
		}
	}
	for i, op := range h.Txns[0].Ops {
		require.Equal(t, history.OpWrite, op.Kind)
		if i > 0 {
			require.Less(t, h.Keys[h.Txns[0].Ops[i-1].Key], h.Keys[op.Key], "init writes sorted, one per key")
		}
	}
	for _, v := range h.AbortedWrites {
		require.True(t, v.Key >= 0 && int(v.Key) < len(h.Keys))
		require.True(t, v.Value >= 0 && int(v.Value) < len(h.Values[v.Key]))
	}
	h.Index()
}

func requireInputError(t *testing.T, err error, name string, offset int64, contains ...string) *history.InputError {
	t.Helper()
	require.Error(t, err)
	var ie *history.InputError
	require.True(t, errors.As(err, &ie), "want *history.InputError, got %T: %v", err, err)
	require.Equal(t, name, ie.Pos.File)
	if offset >= 0 {
		require.Equal(t, offset, ie.Pos.Offset, "%v", err)
	}
	msg := err.Error()
	require.Contains(t, msg, name)
	require.Contains(t, msg, fmt.Sprintf("byte %d", ie.Pos.Offset))
	for _, c := range contains {
		require.Contains(t, msg, c)
	}
	return ie
}

func warnings(h *history.History, sub string) []string {
	var out []string
	for _, w := range h.Warnings {
		if strings.Contains(w.Msg, sub) {
			out = append(out, w.String())
		}
	}
	return out
}

// ---- hand-written samples of the format (docs/formats.md, dbcop) ----

func TestDemo(t *testing.T) {
	h, err := parse(t, demo(t), Options{})
	require.NoError(t, err)
	require.Equal(t, "dbcop", h.Format)
	require.Equal(t, "mem.bincode", h.Source)
	require.Len(t, h.Sessions, 1)
	require.Equal(t, int64(1), h.Sessions[0].ID)
	s := h.Sessions[0].Txns
	require.Len(t, s, 3)
	type want struct {
		id     int64
		status history.Status
		ops    string
		off    int64
	}
	for i, wt := range []want{
		{1, history.Committed, "W(1,1) R(2,0)", 0x86},
		{2, history.Aborted, "W(2,1)", 0xb3},
		{3, history.Committed, "R(1,1)", 0xce},
	} {
		tx := h.Txns[s[i]]
		require.Equal(t, wt.id, tx.ID)
		require.Equal(t, wt.status, tx.Status)
		require.Equal(t, wt.ops, opsString(h, s[i]))
		require.Equal(t, history.Pos{File: "mem.bincode", Offset: wt.off}, tx.Pos)
	}
	require.Equal(t, history.InitImplicit, h.InitKind)
	require.Equal(t, int64(0), h.Txns[0].ID)
	require.Equal(t, "W(1,0) W(2,0)", opsString(h, 0))
	require.Empty(t, h.AbortedWrites)
	// Informational only: T3's failed read, and params that fit neither
	// dbcop's nor PolySI's convention (T2 has 1 event, not 2).
	require.Equal(t, []string{
		"mem.bincode: byte 206: committed transaction 3 has 1 failed events (informational)",
		"mem.bincode: byte 0: params (n_node 1, n_transaction 3, n_event 2) match neither dbcop's per-session counts nor PolySI's totals (1 sessions, 3 transactions, 5 events); informational",
	}, warnings(h, ""))
	require.Equal(t, map[string]string{
		"dbcop.id": "0", "dbcop.n_node": "1", "dbcop.n_variable": "2", "dbcop.n_transaction": "3", "dbcop.n_event": "2",
		"dbcop.info": "demo", "dbcop.start": "2024-01-01T00:00:00+00:00", "dbcop.end": "2024-01-01T00:00:01+00:00",
	}, h.Meta)

	// VeriStrong/PolySI compatibility: T2 goes, T3 keeps id 3, T2's write
	// stays known as an aborted write.
	h, err = parse(t, demo(t), Options{DropAborted: true})
	require.NoError(t, err)
	s = h.Sessions[0].Txns
	require.Len(t, s, 2)
	require.Equal(t, int64(1), h.Txns[s[0]].ID)
	require.Equal(t, int64(3), h.Txns[s[1]].ID)
	require.Equal(t, "W(1,0) W(2,0)", opsString(h, 0))
	require.Len(t, h.AbortedWrites, 1)
	aw := h.AbortedWrites[0]
	require.Equal(t, int64(2), h.Key(aw.Key))
	require.Equal(t, int64(1), h.Value(aw.Key, aw.Value))
}

func TestSamples(t *testing.T) {
	t.Run("galera-polysi", func(t *testing.T) {
		path := shared.Path(t, "samples", "dbcop", "galera-polysi", "history.bincode")
		h, err := Read(path, Options{})
		require.NoError(t, err)
		checkConsistent(t, h)
		require.Equal(t, counts{sessions: 3, committed: 8, writes: 11, reads: 4, init: 1}, count(h))
		require.Equal(t, "W(1,0)", opsString(h, 0))
		// Session 1 is PolySI's materialised initial transaction (value 1).
		first := h.Sessions[0].Txns[0]
		require.Equal(t, "W(1,1)", opsString(h, first))
		require.Equal(t, "generated by SIVerifier", h.Meta["dbcop.info"])
		require.Empty(t, h.Warnings)
		// Read also takes the directory.
		h2, err := Read(filepath.Dir(path), Options{})
		require.NoError(t, err)
		require.Equal(t, count(h), count(h2))
	})
	t.Run("roachdb-cut", func(t *testing.T) {
		path := shared.Path(t, "samples", "dbcop", "roachdb-cut")
		h, err := Read(path, Options{})
		require.NoError(t, err)
		checkConsistent(t, h)
		require.Equal(t, counts{sessions: 2, committed: 2, aborted: 1, writes: 25, reads: 19, init: 39, abortedWrites: 8}, count(h))
		require.Equal(t, []int64{1, 2}, []int64{h.Sessions[0].ID, h.Sessions[1].ID})
		// Params are kept as they are, not checked against the data.
		require.Equal(t, "3", h.Meta["dbcop.id"])
		require.Equal(t, "3", h.Meta["dbcop.n_node"])
		require.Equal(t, "180", h.Meta["dbcop.n_variable"])
		require.Equal(t, "30", h.Meta["dbcop.n_transaction"])
		require.Equal(t, "20", h.Meta["dbcop.n_event"])
		require.Equal(t, "CockroachDB", h.Meta["dbcop.info"])
		require.Equal(t, "2019-03-21T04:40:34.217318012+01:00", h.Meta["dbcop.start"])
		require.Len(t, warnings(h, "params"), 1)
		require.Equal(t, []string{filepath.Join(path, FileName) + ": byte 530: committed transaction 2 has 16 failed events (informational)"},
			warnings(h, "failed events"))
		// Transaction ids count every transaction in file order.
		tx := h.Txns[h.Sessions[1].Txns[0]]
		require.Equal(t, int64(3), tx.ID)
		require.Equal(t, history.Aborted, tx.Status)
		// The first event (§2.7): W key 47 value 1 at 0xa9.
		require.Equal(t, "W(47,1)", opsString(h, h.Sessions[0].Txns[0])[:7])
		// Init: the 39 keys of successful events, none of the 11 keys that
		// occur only in failed events; all writes of 0.
		for _, op := range h.Txns[0].Ops {
			require.Equal(t, int64(0), h.Value(op.Key, op.Value))
		}
		// 50 keys occur in the file; the 11 only in failed events are not
		// initialised, 6 of them are interned by AbortedWrites.
		require.Equal(t, 45, len(h.Keys))

		h, err = Read(path, Options{DropAborted: true})
		require.NoError(t, err)
		// The aborted transaction's successful writes join AbortedWrites,
		// and its keys stay in the initial transaction (VeriStrong's rule).
		c := count(h)
		require.Equal(t, 0, c.aborted)
		require.Equal(t, 2, c.committed)
		require.Equal(t, 39, c.init)
		require.Greater(t, c.abortedWrites, 8)
	})
}

// Every dbcop file of the datasets loads, strictly, and agrees with its
// own DC-style params where it has them.
func TestAllDatasets(t *testing.T) {
	root := shared.Datasets(t)
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".bincode") {
			return err
		}
		n++
		h, err := Read(path, Options{})
		require.NoError(t, err, path)
		if n%50 == 1 {
			checkConsistent(t, h)
		}
		require.Empty(t, warnings(h, "trailing"), path)
		require.Empty(t, warnings(h, "boolean"), path)
		require.Empty(t, warnings(h, "timestamp"), path)
		require.Empty(t, warnings(h, "UTF-8"), path)
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 700)
}

// ---- structural errors ----

func TestTruncatedEverywhere(t *testing.T) {
	inputs := map[string][]byte{"demo": demo(t)}
	if dir := shared.Dir(); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, "datasets", "samples", "dbcop", "roachdb-cut", FileName))
		require.NoError(t, err)
		inputs["roachdb-cut"] = b
	}
	for name, data := range inputs {
		for cut := 0; cut < len(data); cut++ {
			for _, size := range []int64{int64(cut), -1} {
				_, err := Parse(bytes.NewReader(data[:cut]), name, size, Options{})
				ie := requireInputError(t, err, name, -1)
				require.LessOrEqual(t, ie.Pos.Offset, int64(cut), "%s cut %d: %v", name, cut, err)
				if strings.Contains(ie.Msg, "truncated") {
					require.Contains(t, ie.Msg, fmt.Sprintf("file ends at byte %d", cut), "%s cut %d", name, cut)
				} else {
					// With the size known, a count that cannot fit is caught first.
					require.Contains(t, ie.Msg, "left in the file", "%s cut %d: %v", name, cut, err)
					require.GreaterOrEqual(t, size, int64(0))
				}
			}
		}
	}
}

func TestTruncatedMessages(t *testing.T) {
	d := demo(t)
	for _, tc := range []struct {
		cut  int
		off  int64
		want string
	}{
		{0, 0, "file ends at byte 0, inside the 8-byte params.id"},
		{0x2b, 0x28, "8-byte length of the info string"},
		{0x32, 0x30, "4-byte info string"},
		{0x77, 0x76, "8-byte session count"},
		{0x80, 0x7e, "8-byte transaction count of session 1"},
		{0xb5, 0xb3, "8-byte event count of transaction 2 (id 2) of session 1"},
		{0xbb, 0xbb, "1-byte is_write flag of event 1 of transaction 2 (id 2) of session 1"},
		{0xbc, 0xbc, "8-byte key of event 1 of transaction 2"},
		{0xc5, 0xc4, "8-byte value of event 1 of transaction 2"},
		{0xcc, 0xcc, "1-byte success flag of event 1 of transaction 2"},
		{0xcd, 0xcd, "1-byte success flag of transaction 2 (id 2) of session 1"},
		{0xfa, 0xfa, "success flag of transaction 3 (id 3) of session 1"},
	} {
		_, err := Parse(bytes.NewReader(d[:tc.cut]), "demo.bincode", -1, Options{})
		requireInputError(t, err, "demo.bincode", tc.off, "truncated", fmt.Sprintf("file ends at byte %d", tc.cut), tc.want)
	}
}

func TestBadBooleans(t *testing.T) {
	for _, tc := range []struct {
		off  int
		want string
	}{
		{0x8e, "is_write flag of event 1 of transaction 1 (id 1) of session 1 is byte 0x02"},
		{0x9f, "success flag of event 1 of transaction 1 (id 1) of session 1 is byte 0x02"},
		{0xcd, "success flag of transaction 2 (id 2) of session 1 is byte 0x02"},
	} {
		d := demo(t)
		d[tc.off] = 2
		_, err := parse(t, d, Options{})
		requireInputError(t, err, "mem.bincode", int64(tc.off), tc.want, "want 0 or 1")

		// Lenient: non-zero is true, with a warning.
		h, err := parse(t, d, Options{Lenient: true})
		require.NoError(t, err)
		require.Len(t, warnings(h, "taken as true"), 1)
		require.Contains(t, h.Warnings[0].String(), fmt.Sprintf("byte %d", tc.off))
	}
	// The aborted T2 of the demo becomes committed when its byte reads 0x02.
	d := demo(t)
	d[0xcd] = 2
	h, err := parse(t, d, Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, counts{sessions: 1, committed: 3, writes: 2, reads: 2, init: 2}, count(h))
}

func TestHugeLengths(t *testing.T) {
	huge := []uint64{1 << 63, 1<<64 - 1, 1 << 40, 1<<64/18 + 1}
	for _, tc := range []struct {
		off  int
		want string
	}{
		{0x28, "length of the info string"},
		{0x34, "length of the start string"},
		{0x76, "session count"},
		{0x7e, "transaction count of session 1"},
		{0x86, "event count of transaction 1 (id 1) of session 1"},
	} {
		for _, n := range huge {
			d := demo(t)
			binary.LittleEndian.PutUint64(d[tc.off:], n)
			_, err := parse(t, d, Options{})
			requireInputError(t, err, "mem.bincode", int64(tc.off), tc.want, fmt.Sprintf("is %d", n), "left in the file")

			// Without a size the reader must still fail fast and allocate
			// nothing big: it runs into the end of the data.
			start := time.Now()
			_, err = Parse(bytes.NewReader(d), "mem.bincode", -1, Options{})
			require.Error(t, err)
			var ie *history.InputError
			require.ErrorAs(t, err, &ie)
			require.Less(t, time.Since(start), time.Second)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	d := demo(t)
	d[0x32] = 0xff // "de\xffo"
	_, err := parse(t, d, Options{})
	requireInputError(t, err, "mem.bincode", 0x32, "info string is not valid UTF-8")

	h, err := parse(t, d, Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, "de\xffo", h.Meta["dbcop.info"])
	require.Len(t, warnings(h, "not valid UTF-8"), 1)

	d = demo(t)
	d[0x5d+3] = 0xc3 // a lead byte without its continuation in the end time
	_, err = parse(t, d, Options{})
	requireInputError(t, err, "mem.bincode", 0x60, "end string is not valid UTF-8")
}

func TestEmptyAndOdd(t *testing.T) {
	_, err := parse(t, nil, Options{})
	requireInputError(t, err, "mem.bincode", 0, "truncated", "params.id")

	dir := t.TempDir()
	_, err = Read(dir, Options{})
	requireInputError(t, err, dir, 0, "no history.bincode")

	_, err = Read(filepath.Join(dir, "missing.bincode"), Options{})
	require.ErrorIs(t, err, fs.ErrNotExist)

	empty := filepath.Join(dir, FileName)
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = Read(dir, Options{})
	requireInputError(t, err, empty, 0, "truncated")
}

func TestWarnings(t *testing.T) {
	// Zero sessions is a valid, empty history.
	f := simple()
	f.sessions = nil
	f.params = [5]uint64{}
	h, err := parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Equal(t, counts{}, count(h))
	require.Empty(t, h.Warnings)

	// Trailing bytes are ignored with a warning, with --lenient only
	// (TestTrailingBytesRefused).
	f = simple()
	b := append(f.bytes(), 1, 2, 3)
	h, err = parse(t, b, Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, []string{fmt.Sprintf("mem.bincode: byte %d: 3 trailing bytes after the last transaction (ignored)", len(b)-3)},
		warnings(h, "trailing"))
	require.Equal(t, 1, h.Dropped.Other)
	h, err = Parse(bytes.NewReader(b), "x", -1, Options{Lenient: true})
	require.NoError(t, err)
	require.Len(t, warnings(h, "trailing"), 1)

	// Timestamps that dbcop and AWDIT could not parse.
	f = simple()
	f.start, f.end = "", "yesterday"
	h, err = parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Len(t, warnings(h, "not RFC 3339"), 2)

	// An un-executed workload: every success flag is 0.
	f = simple()
	for _, s := range f.sessions {
		for i := range s {
			s[i].ok = false
			for j := range s[i].evs {
				s[i].evs[j].ok = false
			}
		}
	}
	h, err = parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Len(t, warnings(h, "un-executed dbcop workload"), 1)
	require.Equal(t, counts{sessions: 2, aborted: 2, abortedWrites: 2}, count(h))

	// Semantic warnings: duplicate writes, a write of 0, thin-air and
	// aborted reads; a read of the transaction's own write is fine.
	f = simple()
	f.sessions = [][]tx{
		{{evs: []ev{w(1, 1), w(1, 1), w(2, 0), r(1, 1), w(1, 1)}, ok: true}},
		{{evs: []ev{w(3, 7), r(3, 7)}, ok: false}},
		{{evs: []ev{r(3, 7), r(4, 9), fw(5, 5), r(5, 5), fr(6)}, ok: true}},
	}
	f.params = [5]uint64{0, 3, 6, 1, 5}
	h, err = parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Len(t, warnings(h, "repeats the write"), 1, "once per (key, value)")
	require.Len(t, warnings(h, "write of value 0 to key 2"), 1)
	require.Len(t, warnings(h, "aborted read"), 2)
	require.Len(t, warnings(h, "(key 4, value 9) sees a value nothing wrote (thin-air read)"), 1)
	require.Len(t, warnings(h, "has 2 failed events"), 1)
	require.Len(t, warnings(h, "params"), 1)
	// Init covers keys of successful events only: key 6 (a failed read) and
	// key 5 (a failed write) are not; key 5 is read successfully, though.
	require.Equal(t, "W(1,0) W(2,0) W(3,0) W(4,0) W(5,0)", opsString(h, 0))
}

func TestInitExcludesFailedOnlyKeys(t *testing.T) {
	f := simple()
	f.sessions = [][]tx{{{evs: []ev{w(1, 1), fw(9, 9), fr(8)}, ok: true}}}
	h, err := parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Equal(t, "W(1,0)", opsString(h, 0))
	require.Len(t, h.AbortedWrites, 1)
	require.Equal(t, int64(9), h.Key(h.AbortedWrites[0].Key))
	// Key 8 was only in a failed read: not even interned.
	require.Equal(t, []int64{1, 9}, h.Keys)
}

func TestWarningCap(t *testing.T) {
	defer func(n int) { maxWarningsPerKind = n }(maxWarningsPerKind)
	maxWarningsPerKind = 3
	var evs []ev
	for i := range 10 {
		evs = append(evs, r(uint64(i), 1))
	}
	f := simple()
	f.sessions = [][]tx{{{evs: evs, ok: true}}}
	h, err := parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Len(t, warnings(h, "thin-air"), 4)
	require.Contains(t, h.Warnings[len(h.Warnings)-1].Msg, "7 more thin-air read warnings omitted (10 in all)")
}

func TestNegativeKeysAndValues(t *testing.T) {
	f := simple()
	f.sessions = [][]tx{{{evs: []ev{w(1<<63, 1<<64-1), r(1<<63, 1<<64-1)}, ok: true}}}
	h, err := parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Equal(t, "W(-9223372036854775808,-1) R(-9223372036854775808,-1)", opsString(h, h.Sessions[0].Txns[0]))
}

func TestEmptySessionsAndTxns(t *testing.T) {
	f := simple()
	f.sessions = [][]tx{{}, {{ok: true}, {ok: false}}, {}}
	h, err := parse(t, f.bytes(), Options{})
	require.NoError(t, err)
	require.Equal(t, counts{sessions: 3, committed: 1, aborted: 1}, count(h))
	require.Equal(t, []int64{1, 2, 3}, []int64{h.Sessions[0].ID, h.Sessions[1].ID, h.Sessions[2].ID})
}

func BenchmarkRead(b *testing.B) {
	path := shared.Path(b, "bench", "BL-10k", "hist-00000", FileName)
	st, err := os.Stat(path)
	require.NoError(b, err)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(path, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTrailingBytesRefused: a dbcop file followed by more bytes (a second
// history appended to it, issue 26) is an error naming the offset, not a
// warning, unless --lenient.
func TestTrailingBytesRefused(t *testing.T) {
	one := simple().bytes()
	b := append(append([]byte{}, one...), one...)
	_, err := parse(t, b, Options{})
	requireInputError(t, err, "mem.bincode", int64(len(one)), "trailing bytes")
	_, err = Parse(bytes.NewReader(b), "x", -1, Options{})
	require.ErrorContains(t, err, "trailing bytes")
}
