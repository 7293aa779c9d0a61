package cobra

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// ---- an encoder for test logs (§3.2) ----

type rec []byte

func be(b []byte, xs ...int64) []byte {
	for _, x := range xs {
		b = binary.BigEndian.AppendUint64(b, uint64(x))
	}
	return b
}

func S(id int64) rec                   { return be([]byte{'S'}, id) }
func C(id int64) rec                   { return be([]byte{'C'}, id) }
func W(wid, key, val int64) rec        { return be([]byte{'W'}, wid, key, val) }
func R(wt, wid, key, val int64) rec    { return be([]byte{'R'}, wt, wid, key, val) }
func initRead(key, val int64) rec      { return R(InitID, InitID, key, val) }
func nullRead(key int64) rec           { return R(NullID, NullID, key, 0) }
func uW(key, val int64) rec            { return W(UniversalID, key, val) }
func uR(key, val int64) rec            { return R(UniversalID, UniversalID, key, val) }
func logOf(recs ...rec) []byte         { return slices.Concat(recs...) }
func mem(name string, data []byte) Log { return Log{Name: name, Data: bytes.NewReader(data)} }
func signed(u uint64) int64            { return int64(u) }
func parseOne(data []byte, opt Options) (*history.History, error) {
	return ParseLogs("mem", []Log{mem("mem/T1.log", data)}, opt)
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

// opsString renders a transaction's ops as Kind(key,identity).
func opsString(h *history.History, t history.TxnID) string {
	var parts []string
	for _, op := range h.Txns[t].Ops {
		parts = append(parts, fmt.Sprintf("%s(%d,%d)", strings.ToUpper(op.Kind.String()), h.Key(op.Key), h.Value(op.Key, op.Value)))
	}
	return strings.Join(parts, " ")
}

// checkConsistent asserts the invariants every Cobra History keeps.
func checkConsistent(t testing.TB, h *history.History) {
	t.Helper()
	require.NotEmpty(t, h.Txns)
	require.Equal(t, int32(-1), h.Txns[0].Session)
	require.Equal(t, InitID, h.Txns[0].ID)
	require.Equal(t, history.InitImplicit, h.InitKind)
	require.Len(t, h.Values, len(h.Keys))
	n := 1
	for si, s := range h.Sessions {
		if si > 0 {
			require.Less(t, h.Sessions[si-1].ID, s.ID, "sessions in id order")
		}
		for i, id := range s.Txns {
			require.True(t, id > 0 && int(id) < len(h.Txns))
			require.Equal(t, int32(si), h.Txns[id].Session)
			require.Equal(t, int32(i), h.Txns[id].Index)
			n++
		}
	}
	require.Equal(t, len(h.Txns), n, "every transaction is in exactly one session")
	ids := map[int64]bool{}
	maxIdent := int64(0)
	for ti, tx := range h.Txns {
		if ti > 0 {
			require.False(t, ids[tx.ID], "duplicate txn id %#x", tx.ID)
			ids[tx.ID] = true
			require.True(t, tx.Status == history.Committed || tx.Status == history.Unknown)
		}
		for _, op := range tx.Ops {
			require.True(t, op.Kind == history.OpRead || op.Kind == history.OpWrite)
			require.True(t, op.Key >= 0 && int(op.Key) < len(h.Keys))
			require.True(t, op.Value >= 0 && int(op.Value) < len(h.Values[op.Key]))
			id := h.Value(op.Key, op.Value)
			require.Positive(t, id, "identities start at 1")
			maxIdent = max(maxIdent, id)
		}
	}
	require.LessOrEqual(t, maxIdent, int64(count(h).writes+count(h).reads), "identities are dense")
	for i, op := range h.Txns[0].Ops {
		require.Equal(t, history.OpWrite, op.Kind)
		if i > 0 {
			require.Less(t, h.Keys[h.Txns[0].Ops[i-1].Key], h.Keys[op.Key], "init writes sorted, one per key")
		}
	}
	require.Empty(t, h.AbortedWrites)
	require.Contains(t, []string{"unique", "universal"}, h.Meta["cobra.flavour"])
	h.Index()
}

func requireInputError(t *testing.T, err error, file string, offset int64, contains ...string) *history.InputError {
	t.Helper()
	require.Error(t, err)
	var ie *history.InputError
	require.True(t, errors.As(err, &ie), "want *history.InputError, got %T: %v", err, err)
	require.Equal(t, file, ie.Pos.File, "%v", err)
	if offset >= 0 {
		require.Equal(t, offset, ie.Pos.Offset, "%v", err)
	}
	msg := err.Error()
	require.Contains(t, msg, file)
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

// ---- hand-written samples of the format (docs/formats.md, cobra) ----

func TestYugaCut(t *testing.T) {
	dir := shared.Path(t, "samples", "cobra", "yuga-G2-a-cut")
	h, err := Read(dir, Options{})
	require.NoError(t, err)
	checkConsistent(t, h)
	require.Equal(t, counts{sessions: 2, committed: 3, writes: 6, reads: 2, init: 1}, count(h))
	require.Equal(t, "unique", h.Meta["cobra.flavour"])
	require.Empty(t, h.Warnings)
	require.Equal(t, dir, h.Source)
	require.Equal(t, "cobra", h.Format)

	// §3.8: identities in scan order, T6 before T7.
	require.Equal(t, []int64{6, 7}, []int64{h.Sessions[0].ID, h.Sessions[1].ID})
	s6 := h.Sessions[0].Txns
	require.Len(t, s6, 2)
	require.Equal(t, int64(0x100001), h.Txns[s6[0]].ID)
	require.Equal(t, "R(0,1) W(3,2) W(2,3) W(4,4)", opsString(h, s6[0]))
	require.Equal(t, int64(0x100002), h.Txns[s6[1]].ID)
	require.Equal(t, "W(3,5) R(4,4) W(4,6)", opsString(h, s6[1]))
	require.Equal(t, "W(0,1)", opsString(h, history.InitTxn))
	t6 := filepath.Join(dir, "T6.log")
	require.Equal(t, history.Pos{File: t6, Offset: 0}, h.Txns[s6[0]].Pos)
	require.Equal(t, history.Pos{File: t6, Offset: 0x7e}, h.Txns[s6[1]].Pos)
	// T7's one transaction continues the numbering.
	for _, op := range h.Txns[h.Sessions[1].Txns[0]].Ops {
		require.Greater(t, h.Value(op.Key, op.Value), int64(6))
	}
}

func TestCockBlog(t *testing.T) {
	defer func(n int) { maxWarningsPerKind = n }(maxWarningsPerKind)
	maxWarningsPerKind = 1000
	h, err := Read(shared.Path(t, "samples", "cobra", "cock-blog"), Options{})
	require.NoError(t, err)
	checkConsistent(t, h)
	require.Equal(t, counts{sessions: 13, committed: 21, writes: 3, reads: 18}, count(h))
	require.Equal(t, "unique", h.Meta["cobra.flavour"])
	thin := warnings(h, "thin-air")
	require.Len(t, thin, 8)
	require.Len(t, h.Warnings, 8)
	for _, w := range thin {
		require.Contains(t, w, "no log has that write id")
	}
	var ids []int64
	for _, s := range h.Sessions {
		ids = append(ids, s.ID)
	}
	require.Equal(t, []int64{0, 1, 5, 6, 7, 8, 9, 15, 16, 17, 18, 19, 20}, ids)
}

func TestRubisCut(t *testing.T) {
	dir := shared.Path(t, "samples", "cobra", "rubis-1k-cut")
	h, err := Read(dir, Options{})
	require.NoError(t, err)
	checkConsistent(t, h)
	require.Equal(t, counts{sessions: 2, committed: 8, writes: 7, reads: 38, init: 37}, count(h))
	require.Equal(t, "universal", h.Meta["cobra.flavour"])
	require.Empty(t, h.Warnings)
	require.Equal(t, []int64{28, 30}, []int64{h.Sessions[0].ID, h.Sessions[1].ID})

	// §3.8: T28's one transaction.
	t28 := h.Sessions[0].Txns[0]
	require.Equal(t, int64(0x10003f7ea), h.Txns[t28].ID)
	k1, k2, k3 := signed(0x7efc4f1b7e2891ff), signed(0xd9392122286ef889), signed(0xa8e0f88140f7f5f7)
	require.Negative(t, k2, "keys keep all 64 bits")
	require.Equal(t, fmt.Sprintf("W(%d,1) R(%d,2) W(%d,3)", k1, k2, k3), opsString(h, t28))
	// In T30, 0x10003f80a reads key 0xa8e0f88140f7f5f7 by (key, value):
	// identity 3, T28's write.
	var found, nulls bool
	for _, id := range h.Sessions[1].Txns {
		tx := h.Txns[id]
		switch tx.ID {
		case 0x10003f80a:
			for _, op := range tx.Ops {
				if op.Kind == history.OpRead && h.Key(op.Key) == k3 {
					require.Equal(t, int64(3), h.Value(op.Key, op.Value))
					found = true
				}
			}
		case 0x10003f7fa:
			// Two NULL reads followed by writes of the same keys.
			ops := tx.Ops
			require.GreaterOrEqual(t, len(ops), 4)
			require.Equal(t, history.OpRead, ops[0].Kind)
			require.Equal(t, history.OpRead, ops[1].Kind)
			nulls = true
		}
	}
	require.True(t, found)
	require.True(t, nulls)
	// Each initially read key has one initial write: the first INIT/NULL
	// read's identity.
	for _, op := range h.Txns[0].Ops {
		require.Positive(t, h.Value(op.Key, op.Value))
	}
}

// ---- every Cobra directory of the datasets ----

func cobraDirs(t *testing.T) []string {
	root := shared.Datasets(t)
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		m, _ := filepath.Glob(filepath.Join(path, "T*.log"))
		if len(m) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	require.NoError(t, err)
	return dirs
}

func TestAllDirectories(t *testing.T) {
	defer func(n int) { maxWarningsPerKind = n }(maxWarningsPerKind)
	maxWarningsPerKind = 1 << 30
	root := shared.Datasets(t)
	dirs := cobraDirs(t)
	require.GreaterOrEqual(t, len(dirs), 14)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		h, err := Read(dir, Options{})
		require.NoError(t, err, rel)
		checkConsistent(t, h)
		detected := h.Meta["cobra.flavour"]
		switch {
		case strings.HasPrefix(rel, "bench/"):
			require.Equal(t, "universal", detected, rel)
		case strings.HasPrefix(rel, "anomalies/ser/cobra/"):
			require.Equal(t, "unique", detected, rel)
		}
		// With the detected flavour, only cock-blog has reads without a
		// writer (docs/formats.md).
		thin := len(warnings(h, "thin-air"))
		if filepath.Base(rel) == "cock-blog" {
			require.Equal(t, 8, thin, rel)
		} else {
			require.Zero(t, thin, rel)
		}
		require.Empty(t, warnings(h, "mixed flavour"), rel)

		// The other flavour loads too; it says it does not fit.
		other := Unique
		if detected == "unique" {
			other = Universal
		}
		h2, err := Read(dir, Options{Flavour: other})
		require.NoError(t, err, rel)
		require.Equal(t, other.String(), h2.Meta["cobra.flavour"])
		require.Equal(t, detected, h2.Meta["cobra.detected_flavour"])
		require.Len(t, warnings(h2, "flavour, but"), 1, rel)
		require.Equal(t, count(h), count(h2), rel)
	}
}

// The duplicate-write counts of §3.4: RUBiS-1k has 18, Twitter-1k 49
// (key, value) pairs written more than once, each reported once.
func TestUniversalDuplicates(t *testing.T) {
	defer func(n int) { maxWarningsPerKind = n }(maxWarningsPerKind)
	maxWarningsPerKind = 1 << 30
	for name, n := range map[string]int{"rubis-1k": 18, "twitter-1k": 49} {
		h, err := Read(shared.Path(t, "bench", name), Options{})
		require.NoError(t, err)
		require.Len(t, warnings(h, "repeats an earlier write"), n, name)
	}
}

// ---- file selection and order (§3.1) ----

func TestOrder(t *testing.T) {
	tx := func(id int64) []byte { return logOf(S(id), W(id, 1, 1), C(id)) }
	logs := []Log{
		mem("d/foo.log", tx(1)), mem("d/T10.log", tx(2)), mem("d/T2.log", tx(3)),
		mem("d/T01.log", tx(4)), mem("d/bar.log", tx(5)), mem("d/T1.log", tx(6)),
	}
	h, err := ParseLogs("d", logs, Options{})
	require.NoError(t, err)
	checkConsistent(t, h)
	var got []string
	for _, s := range h.Sessions {
		got = append(got, fmt.Sprintf("%d:%s", s.ID, h.Txns[s.Txns[0]].Pos.File))
	}
	require.Equal(t, []string{"1:d/T1.log", "2:d/T2.log", "10:d/T10.log", "11:d/T01.log", "12:d/bar.log", "13:d/foo.log"}, got)

	_, err = ParseLogs("d", []Log{mem("a/T1.log", tx(1)), mem("b/T1.log", tx(2))}, Options{})
	requireInputError(t, err, "b/T1.log", 0, "two logs named T1.log")

	_, err = ParseLogs("d", nil, Options{})
	requireInputError(t, err, "d", 0, "no .log file")
}

func TestReadDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := Read(dir, Options{})
	requireInputError(t, err, dir, 0, "no .log file")

	// Only .log files count.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "T1.debug"), []byte("[DEBUG] Txn[1] start\n"), 0o644))
	_, err = Read(dir, Options{})
	requireInputError(t, err, dir, 0, "no .log file")

	log := filepath.Join(dir, "T3.log")
	require.NoError(t, os.WriteFile(log, logOf(S(5), W(1, 2, 3), C(5)), 0o644))
	require.NoError(t, os.Symlink(log, filepath.Join(dir, "T4.log")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "T5.log"), logOf(S(6), C(6)), 0o644))
	_, err = Read(dir, Options{})
	// T4.log is a link to T3.log: the same transaction twice.
	requireInputError(t, err, filepath.Join(dir, "T4.log"), 0, "transaction id 0x5 started twice: first at "+log+": byte 0")
	require.NoError(t, os.Remove(filepath.Join(dir, "T4.log")))
	h, err := Read(dir, Options{})
	require.NoError(t, err)
	require.Equal(t, counts{sessions: 2, committed: 2, writes: 1}, count(h))

	_, err = Read(log, Options{})
	requireInputError(t, err, log, 0, "not a directory")
	_, err = Read(filepath.Join(dir, "missing"), Options{})
	require.ErrorIs(t, err, fs.ErrNotExist)

	// A Viper result directory's json/ folder is not a Cobra history.
	viper := shared.Path(t, "samples", "viper-json")
	_, err = Read(viper, Options{})
	requireInputError(t, err, filepath.Join(viper, "J24.log"), 0, "this is a Viper JSON log")
}

func TestFlavour(t *testing.T) {
	for s, want := range map[string]Flavour{"auto": Auto, "": Auto, "unique": Unique, "universal": Universal, "cobra-uv": Unique, "cobra": Universal} {
		f, ok := ParseFlavour(s)
		require.True(t, ok, s)
		require.Equal(t, want, f)
	}
	_, ok := ParseFlavour("Unique")
	require.False(t, ok)
	for _, f := range []Flavour{Auto, Unique, Universal} {
		g, ok := ParseFlavour(f.String())
		require.True(t, ok)
		require.Equal(t, f, g)
	}
	require.Equal(t, "Flavour(9)", Flavour(9).String())
	_, err := parseOne(nil, Options{Flavour: 9})
	require.Error(t, err)

	// Mixed write ids: universal wins, with a warning.
	h, err := parseOne(logOf(S(1), W(7, 1, 1), uW(2, 2), C(1)), Options{})
	require.NoError(t, err)
	require.Equal(t, "universal", h.Meta["cobra.flavour"])
	require.Equal(t, []string{"mem/T1.log: byte 9: mixed flavour: 1 writes have the UNIVERSAL write id and 1 do not; reading as universal"},
		warnings(h, "mixed"))
}

// Identities of the unique flavour tell equal value hashes apart by writer;
// the universal flavour matches by (key, value hash).
func TestIdentities(t *testing.T) {
	log := logOf(
		S(10), initRead(1, 0), W(100, 1, 5), W(101, 2, 5), C(10),
		S(11), R(10, 100, 1, 5), W(102, 1, 5), nullRead(3), initRead(1, 0), C(11),
		S(12), R(11, 102, 1, 5), R(10, 101, 2, 5), C(12),
	)
	h, err := parseOne(log, Options{Flavour: Unique})
	require.NoError(t, err)
	checkConsistent(t, h)
	tx := h.Sessions[0].Txns
	require.Equal(t, "R(1,1) W(1,2) W(2,3)", opsString(h, tx[0]))
	require.Equal(t, "R(1,2) W(1,4) R(3,5) R(1,1)", opsString(h, tx[1]))
	require.Equal(t, "R(1,4) R(2,3)", opsString(h, tx[2]))
	require.Equal(t, "W(1,1) W(3,5)", opsString(h, history.InitTxn))
	require.Empty(t, h.Warnings)

	ulog := logOf(
		S(10), initRead(1, 0), uW(1, 5), uW(2, 5), C(10),
		S(11), uR(1, 5), uW(1, 5), nullRead(3), C(11),
		S(12), uR(1, 5), uR(2, 5), C(12),
	)
	h, err = parseOne(ulog, Options{})
	require.NoError(t, err)
	checkConsistent(t, h)
	tx = h.Sessions[0].Txns
	// Key is not part of an identity: (UNIVERSAL, UNIVERSAL, 5) is one
	// identity on both keys; the two writes of (1, 5) stay duplicates.
	require.Equal(t, "R(1,1) W(1,2) W(2,2)", opsString(h, tx[0]))
	require.Equal(t, "R(1,2) W(1,2) R(3,3)", opsString(h, tx[1]))
	require.Equal(t, "R(1,2) R(2,2)", opsString(h, tx[2]))
	require.Equal(t, "W(1,1) W(3,3)", opsString(h, history.InitTxn))
	require.Len(t, warnings(h, "repeats an earlier write"), 1)
}

// ---- structural errors C1–C9 ----

func TestStructuralErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  []byte
		off  int64
		want string
	}{
		{"C1 unknown opcode", logOf(S(1), C(1), rec{0xff}), 18, "unknown record type byte 0xff at a record start"},
		{"C1 abort record", logOf(S(1), rec{'A'}), 9, "record type byte 0x41 ('A'): Cobra logs have no abort record"},
		{"C1 zero byte", logOf(S(1), W(1, 1, 1), rec{0}), 34, "unknown record type byte 0x00"},
		{"Viper JSON", []byte(`{"value": [[1]]}`), 0, "this is a Viper JSON log (docs/formats.md, section viper), not a Cobra log: read it with --format viper"},
		{"C2 truncated S", logOf(S(1), C(1))[:14], 9, "truncated: file ends at byte 14, inside the 9-byte C (commit) record"},
		{"C2 truncated R", logOf(S(1), R(1, 2, 3, 4))[:40], 9, "file ends at byte 40, inside the 33-byte R (read) record"},
		{"C3 nested S", logOf(S(1), W(1, 1, 1), S(2), C(2), C(1)), 34, "S of transaction 0x2 while transaction 0x1, started at byte 0, is still open"},
		{"C4 C without S", logOf(S(1), C(1), C(1)), 18, "C of transaction 0x1 with no open transaction"},
		{"C4 C mismatch", logOf(S(1), C(2)), 9, "C of transaction 0x2, but the open transaction is 0x1, started at byte 0"},
		{"C5 W outside", logOf(W(1, 1, 1)), 0, "W (write) record outside a transaction"},
		{"C5 R outside", logOf(S(1), C(1), R(1, 1, 1, 1)), 18, "R (read) record outside a transaction"},
		{"C6 txn twice", logOf(S(1), C(1), S(1), C(1)), 18, "transaction id 0x1 started twice: first at mem/T1.log: byte 0"},
		{"C7 open at EOF", logOf(S(1), C(1), S(-2), W(1, 1, 1)), 18, "transaction 0xfffffffffffffffe is still open when the file ends at byte 52"},
		{"C9 write id twice", logOf(S(1), W(7, 1, 1), C(1), S(2), W(7, 2, 2), C(2)), 52, "write id 0x7 is already used by the write at mem/T1.log: byte 9"},
		{"init sentinel", logOf(S(InitID), C(InitID)), 0, "transaction id 0xbebeebee is the initial transaction's sentinel id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseOne(tc.log, Options{})
			requireInputError(t, err, "mem/T1.log", tc.off, tc.want)
		})
	}
	// C6 across files, reported in the later file.
	_, err := ParseLogs("mem", []Log{mem("T2.log", logOf(S(1), C(1))), mem("T1.log", logOf(S(1), C(1)))}, Options{})
	requireInputError(t, err, "T2.log", 0, "started twice: first at T1.log: byte 0")
}

func TestC9OnlyInUniqueFlavour(t *testing.T) {
	log := logOf(S(1), W(7, 1, 1), C(1), S(2), W(7, 1, 1), C(2))
	h, err := parseOne(log, Options{Flavour: Universal})
	require.NoError(t, err)
	require.Equal(t, "W(1,1)", opsString(h, h.Sessions[0].Txns[1]))
	// UNIVERSAL write ids read as unique: not duplicates of each other.
	h, err = parseOne(logOf(S(1), uW(1, 1), uW(1, 2), C(1)), Options{Flavour: Unique})
	require.NoError(t, err)
	require.Equal(t, "W(1,1) W(1,2)", opsString(h, h.Sessions[0].Txns[0]))
}

func TestLenientOpenTransaction(t *testing.T) {
	log := logOf(S(1), initRead(1, 0), C(1), S(2), W(3, 1, 9))
	h, err := parseOne(log, Options{Lenient: true})
	require.NoError(t, err)
	checkConsistent(t, h)
	require.Equal(t, counts{sessions: 1, committed: 1, unknown: 1, writes: 1, reads: 1, init: 1}, count(h))
	require.Equal(t, []string{"mem/T1.log: byte 51: transaction 0x2 has no commit record when the file ends: kept with status unknown"},
		warnings(h, "no commit record"))
	// Other structural errors stay fatal.
	_, err = parseOne(logOf(S(1), C(2)), Options{Lenient: true})
	require.Error(t, err)
}

// Every prefix of a real log is either a clean history or an error naming
// the byte where the file ends.
func TestTruncatedEverywhere(t *testing.T) {
	data, err := os.ReadFile(shared.Path(t, "samples", "cobra", "yuga-G2-a-cut", "T6.log"))
	require.NoError(t, err)
	ok := 0
	for cut := 0; cut <= len(data); cut++ {
		h, err := parseOne(data[:cut], Options{})
		if err == nil {
			checkConsistent(t, h)
			ok++
			continue
		}
		ie := requireInputError(t, err, "mem/T1.log", -1, fmt.Sprintf("file ends at byte %d", cut))
		require.LessOrEqual(t, ie.Pos.Offset, int64(cut))

		// Lenient reading recovers exactly the cuts at record boundaries.
		h, err = parseOne(data[:cut], Options{Lenient: true})
		if err == nil {
			checkConsistent(t, h)
			require.Equal(t, 1, count(h).unknown)
		} else {
			require.Contains(t, err.Error(), "truncated")
		}
	}
	require.Equal(t, 3, ok, "empty, after the first C, after the second C")
}

func TestSemanticWarnings(t *testing.T) {
	log := logOf(
		S(1), initRead(1, 0), initRead(1, 7), R(InitID, GCTrue, 2, 0), R(NullID, 42, 3, 0), W(5, 4, 1), R(1, 5, 4, 1), C(1),
		S(2), R(1, 5, 4, 2), R(9, 99, 4, 1), R(1, 5, 5, 1), C(2),
	)
	h, err := parseOne(log, Options{})
	require.NoError(t, err)
	checkConsistent(t, h)
	require.Equal(t, "W(1,1)", opsString(h, history.InitTxn))
	require.Len(t, warnings(h, "differs from the key's first such read"), 1)
	require.Len(t, warnings(h, "garbage collector"), 1)
	require.Len(t, warnings(h, "neither INIT nor NULL"), 1)
	require.Len(t, warnings(h, "its own transaction 0x1 as the writer"), 1)
	thin := warnings(h, "thin-air")
	require.Len(t, thin, 5, "%q", thin)
	require.Contains(t, thin[2], "write id 0x5, value hash 0x2) matches no write (thin-air read); that write id belongs to the write at mem/T1.log: byte 141")
	require.Contains(t, thin[3], "no log has that write id")

	// An empty log is a session without transactions.
	h, err = ParseLogs("mem", []Log{mem("T1.log", nil), mem("T2.log", logOf(S(1), C(1)))}, Options{})
	require.NoError(t, err)
	require.Equal(t, counts{sessions: 2, committed: 1}, count(h))
	require.Len(t, warnings(h, "empty log"), 1)
}

func TestWarningCap(t *testing.T) {
	defer func(n int) { maxWarningsPerKind = n }(maxWarningsPerKind)
	maxWarningsPerKind = 2
	var recs []rec
	recs = append(recs, S(1))
	for i := range 5 {
		recs = append(recs, R(77, 88, int64(i), 1))
	}
	recs = append(recs, C(1))
	h, err := parseOne(logOf(recs...), Options{})
	require.NoError(t, err)
	require.Len(t, warnings(h, "thin-air"), 3)
	require.Equal(t, "mem/T1.log: byte 75: 3 more thin-air read warnings omitted (5 in all), the first of them here", h.Warnings[2].String())
}

func BenchmarkRead(b *testing.B) {
	for _, name := range []string{"tpcc-10k", "rubis-10k", "twitter-10k"} {
		b.Run(name, func(b *testing.B) {
			dir := shared.Path(b, "bench", name)
			var size int64
			m, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			for _, f := range m {
				st, err := os.Stat(f)
				require.NoError(b, err)
				size += st.Size()
			}
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Read(dir, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
