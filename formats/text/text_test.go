package text

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

func parse(t *testing.T, src string, opt Options) *history.History {
	t.Helper()
	h, err := Parse(strings.NewReader(src), "mem.txt", opt)
	require.NoError(t, err)
	require.NoError(t, h.CheckInvariants())
	return h
}

// describe renders a history compactly for exact comparisons.
func describe(h *history.History) string {
	var sb strings.Builder
	ops := func(t history.TxnID) {
		for i, op := range h.Txns[t].Ops {
			if i > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%s(%d,%d)", strings.ToUpper(op.Kind.String()), h.Key(op.Key), h.Value(op.Key, op.Value))
		}
	}
	for _, s := range h.Sessions {
		fmt.Fprintf(&sb, "S%d:", s.ID)
		for _, t := range s.Txns {
			fmt.Fprintf(&sb, " T%d[", h.Txns[t].ID)
			ops(t)
			sb.WriteByte(']')
		}
		sb.WriteString("; ")
	}
	fmt.Fprintf(&sb, "init %v T%d[", h.InitKind, h.Txns[0].ID)
	ops(0)
	sb.WriteString("]; aborted {")
	for i, v := range h.AbortedWrites {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "(%d,%d)", h.Key(v.Key), h.Value(v.Key, v.Value))
	}
	sb.WriteString("}")
	return sb.String()
}

type counts struct {
	sessions, txns, writes, reads, initWrites, aborted int
}

func count(t *testing.T, h *history.History) counts {
	c := counts{sessions: len(h.Sessions), txns: len(h.Txns) - 1, initWrites: len(h.Txns[0].Ops), aborted: len(h.AbortedWrites)}
	for _, tx := range h.Txns[1:] {
		require.Equal(t, history.Committed, tx.Status)
		for _, op := range tx.Ops {
			if op.Kind.IsWrite() {
				c.writes++
			} else {
				c.reads++
			}
		}
	}
	return c
}

// roundTrip checks that the native JSONL format keeps h exactly: writing
// h, reading it back and writing again gives the same bytes, and the
// structure read back describes the same history.
func roundTrip(t *testing.T, h *history.History) {
	t.Helper()
	var a, b bytes.Buffer
	require.NoError(t, jsonl.Write(&a, h))
	h2, err := jsonl.Parse(bytes.NewReader(a.Bytes()), "rt.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.NoError(t, jsonl.Write(&b, h2))
	require.Equal(t, a.String(), b.String())
	require.Equal(t, describe(h), describe(h2))
	require.Equal(t, h.Txns[0].ID, h2.Txns[0].ID)
	require.Equal(t, h.InitKind, h2.InitKind)
}

// Test oracle: the format as docs/formats.md (text) describes it.
func TestSamples(t *testing.T) {
	for _, tc := range []struct {
		file   string
		want   counts
		kind   history.InitKind
		initID int64
	}{
		{"galera.txt", counts{2, 7, 10, 4, 1, 0}, history.InitImplicit, -1},
		{"pg_ser_bug.txt", counts{20, 20, 20, 20, 10, 0}, history.InitExplicit, 0},
		{"yugabyte_tcc.txt", counts{2, 20, 97, 103, 20, 0}, history.InitExplicit, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h, err := Read(shared.Path(t, "samples", "text", tc.file), Options{})
			require.NoError(t, err)
			require.NoError(t, h.CheckInvariants())
			require.Equal(t, tc.want, count(t, h))
			require.Equal(t, tc.kind, h.InitKind)
			require.Equal(t, tc.initID, h.Txns[0].ID)
			require.Equal(t, Format, h.Format)
			for _, op := range h.Txns[0].Ops {
				require.Equal(t, int64(0), h.Value(op.Key, op.Value))
			}
			roundTrip(t, h)
		})
	}
}

func TestPgSerBugShape(t *testing.T) {
	h, err := Read(shared.Path(t, "samples", "text", "pg_ser_bug.txt"), Options{})
	require.NoError(t, err)
	d := describe(h)
	// Session 0 (the initial transaction) is gone; session 1 starts the list.
	require.True(t, strings.HasPrefix(d, "S1: T1[W(9,1) R(10,0)]; "), d)
	require.Contains(t, d, "S20: T20[W(6,1) R(6,1)]; init explicit T0[W(1,0) W(2,0) W(3,0) W(4,0) W(5,0) W(6,0) W(7,0) W(8,0) W(9,0) W(10,0)]")
	require.Empty(t, h.Warnings)
}

// A hand-written example of the format (docs/formats.md, text).
func TestHandWritten(t *testing.T) {
	h := parse(t, "w(1,1,1,1)\nr(2,0,1,1)\nw(2,5,2,-1)\nr(1,1,2,7)\nr(2,0,2,7)\n", Options{})
	require.Equal(t, "S1: T1[W(1,1) R(2,0)]; S2: T7[R(1,1) R(2,0)]; init implicit T-1[W(1,0) W(2,0)]; aborted {(2,5)}", describe(h))
	require.Empty(t, h.Warnings)
	require.Equal(t, history.Pos{File: "mem.txt", Line: 4}, h.Txns[2].Pos)
	roundTrip(t, h)
}

func TestLineEndings(t *testing.T) {
	want := "S3: T4[W(1,2) R(1,2)]; init implicit T-1[W(1,0)]; aborted {}"
	for _, src := range []string{
		"w(1,2,3,4)\nr(1,2,3,4)\n",
		"w(1,2,3,4)\nr(1,2,3,4)",
		"w(1,2,3,4)\r\nr(1,2,3,4)\r\n",
		"w(1,2,3,4)\r\nr(1,2,3,4)",
		"w(01,2,3,0004)\nr(1,002,3,4)\n",
	} {
		require.Equal(t, want, describe(parse(t, src, Options{})), "%q", src)
	}
}

func TestInitDetection(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"explicit, not first, duplicate key collapses",
			"r(1,0,1,1)\nw(1,0,0,0)\nw(2,0,0,0)\nw(1,0,0,0)\nw(1,5,1,1)\nr(3,7,1,1)\n",
			"S1: T1[R(1,0) W(1,5) R(3,7)]; init explicit T0[W(1,0) W(2,0) W(3,0)]; aborted {}"},
		{"two zero writers: implicit",
			"w(1,0,0,0)\nw(2,0,1,1)\n",
			"S0: T0[W(1,0)]; S1: T1[W(2,0)]; init implicit T-1[W(1,0) W(2,0)]; aborted {}"},
		{"zero writer that also reads: implicit",
			"w(1,0,0,0)\nr(2,0,0,0)\n",
			"S0: T0[W(1,0) R(2,0)]; init implicit T-1[W(1,0) W(2,0)]; aborted {}"},
		{"zero writer that writes non-zero later: implicit",
			"w(1,0,0,0)\nw(1,0,0,0)\nw(1,3,0,0)\n",
			"S0: T0[W(1,0) W(1,0) W(1,3)]; init implicit T-1[W(1,0)]; aborted {}"},
		{"explicit init keeps its session's other txn",
			"w(1,0,5,9)\nw(1,1,5,10)\n",
			"S5: T10[W(1,1)]; init explicit T9[W(1,0)]; aborted {}"},
		{"aborted keys get an initial value",
			"w(1,3,1,1)\nw(9,4,1,-1)\n",
			"S1: T1[W(1,3)]; init implicit T-1[W(1,0) W(9,0)]; aborted {(9,4)}"},
		{"only aborted lines",
			"w(9,4,1,-1)\nr(9,4,1,-1)\n",
			"init implicit T-1[W(9,0)]; aborted {(9,4)}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := parse(t, tc.src, Options{})
			require.Equal(t, tc.want, describe(h))
			roundTrip(t, h)
		})
	}
}

func TestWarnings(t *testing.T) {
	msgs := func(h *history.History) string {
		var s []string
		for _, w := range h.Warnings {
			s = append(s, w.String())
		}
		return strings.Join(s, "\n")
	}
	h := parse(t, strings.Join([]string{
		"w(1,1,1,1)",  // 1
		"w(2,1,2,2)",  // 2
		"r(1,1,1,1)",  // 3: txn 1 resumes
		"r(5,0,1,-1)", // 4
		"r(5,0,1,-1)", // 5
		"w(3,0,2,2)",  // 6: value 0 outside init
		"w(3,0,1,3)",  // 7: second zero writer, also duplicate (3,0)
		"r(4,8,1,3)",  // 8: key 4 never written
		"w(2,1,1,3)",  // 9: duplicate (2,1)
	}, "\n"), Options{})
	require.Equal(t, history.InitImplicit, h.InitKind)
	got := msgs(h)
	for _, want := range []string{
		"mem.txt:3: lines of transaction 1 are not contiguous (previous line 1)",
		"mem.txt:6: lines of transaction 2 are not contiguous (previous line 2)",
		"mem.txt:4: 2 read(s) with txn -1 ignored",
		"mem.txt:2: value 0 written by transaction 2",
		"mem.txt:7: value 0 written by transaction 3",
		"mem.txt:7: value 0 of key 3 written by transactions 2 and 3",
		"mem.txt:7: value 1 of key 2 written by transactions 2 and 3",
		"mem.txt:7: key 4 is read (value 8 by transaction 3) but never written",
	} {
		require.Contains(t, got, want)
	}
	require.Len(t, h.Warnings, 8, got)

	// Many warnings of one kind are capped with a summary.
	var sb strings.Builder
	for i := range 25 {
		fmt.Fprintf(&sb, "r(%d,1,1,1)\n", i)
	}
	h = parse(t, sb.String(), Options{})
	require.Len(t, h.Warnings, history.MaxWarningsPerKind+1)
	require.Contains(t, h.Warnings[history.MaxWarningsPerKind].Msg, "15 more warnings")
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		want      string
	}{
		{"empty", "", 1, "empty file"},
		{"blank line in the middle", "w(1,1,1,1)\n\nr(1,1,1,1)\n", 2, "blank line"},
		{"blank last line", "w(1,1,1,1)\n\n", 2, "blank line"},
		{"spaces", "w(1,1,1,1)\nw(1, 2,1,1)\n", 2, `expected digits for value at column 5 in "w(1, 2,1,1)"`},
		{"leading space", " w(1,2,1,1)\n", 1, `expected "r" or "w" at column 1`},
		{"trailing space", "w(1,2,1,1) \n", 1, `unexpected text after ")" at column 11`},
		{"upper-case op", "W(1,2,1,1)\n", 1, `expected "r" or "w" at column 1 in "W(1,2,1,1)"`},
		{"other op", "x(1,2,1,1)\n", 1, `expected "r" or "w"`},
		{"missing paren", "w1,2,1,1)\n", 1, `expected "(" at column 2`},
		{"missing field", "w(1,2,1)\n", 1, `expected ',' after session at column 8`},
		{"extra field", "w(1,2,1,1,5)\n", 1, `expected ')' after txn at column 10`},
		{"non-digit", "w(1,a,1,1)\n", 1, "expected digits for value"},
		{"sign on key", "w(-1,2,1,1)\n", 1, "expected digits for key"},
		{"plus sign", "w(1,+2,1,1)\n", 1, "expected digits for value"},
		{"sign on session", "w(1,2,-1,1)\n", 1, "expected digits for session"},
		{"lone minus", "w(1,2,1,-)\n", 1, "expected digits for txn"},
		{"lone CR", "w(1,2,1,1)\rr(1,2,1,1)\n", 1, `unexpected text after ")"`},
		{"T2 key", "w(9223372036854775808,1,1,1)\n", 1, "key 9223372036854775808 out of range"},
		{"T2 txn", "w(1,1,1,99999999999999999999)\n", 1, "txn 99999999999999999999 out of range"},
		{"T2 negative txn", "w(1,1,1,-99999999999999999999)\n", 1, "txn 99999999999999999999 out of range"},
		{"T3", "w(1,1,1,1)\nw(1,2,1,-2)\n", 2, "negative txn id -2"},
		{"T3 minus zero", "w(1,2,1,-0)\n", 1, "negative txn id -0"},
		{"T4", "w(1,1,1,1)\nw(1,2,2,1)\n", 2, "transaction 1 is in session 1 (line 1) but this line names session 2"},
		{"T5", "w(1,1,1,1)\nw(1,\xff,1,1)\n", 2, "not valid UTF-8"},
		{"T5 valid but not ASCII", "w(1,１,1,1)\n", 1, "expected digits for value"},
		{"BOM", "\ufeffw(1,1,1,1)\n", 1, `expected "r" or "w"`},
		{"too long", "w(1,1,1,1)\n" + strings.Repeat("9", 100000) + "\n", 2, "line longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.src), "mem.txt", Options{})
			require.Error(t, err)
			var ie *history.InputError
			require.True(t, errors.As(err, &ie), "%T", err)
			require.Equal(t, tc.line, ie.Pos.Line)
			require.Equal(t, "mem.txt", ie.Pos.File)
			if tc.line > 0 {
				require.Contains(t, err.Error(), fmt.Sprintf("mem.txt:%d: ", tc.line))
			}
			require.Contains(t, err.Error(), tc.want)

			// Lenient mode recovers from every one of them.
			h, err := Parse(strings.NewReader(tc.src), "mem.txt", Options{Lenient: true})
			require.NoError(t, err)
			require.NoError(t, h.CheckInvariants())
			require.NotEmpty(t, h.Warnings)
		})
	}
}

func TestLenient(t *testing.T) {
	h := parse(t, "w(1,1,1,1)\n\nW(1,2,1,1)\nw(1,2,2,1)\nr(1,1,1,2)\n", Options{Lenient: true})
	require.Equal(t, "S1: T1[W(1,1) W(1,2)] T2[R(1,1)]; init implicit T-1[W(1,0)]; aborted {}", describe(h))
	require.Len(t, h.Warnings, 3)
	require.Equal(t, 2, h.Warnings[0].Pos.Line)
	require.Equal(t, 3, h.Warnings[1].Pos.Line)
	require.Contains(t, h.Warnings[2].Msg, "transaction 1 kept in its first session 1, not 2")
}

func TestIOError(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "missing.txt"), Options{})
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = Parse(errReader{}, "x", Options{})
	require.ErrorContains(t, err, "x: boom")
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

// All text histories of the shared datasets load in strict mode.
func TestDatasets(t *testing.T) {
	root := shared.Datasets(t)
	var files []string
	for _, pat := range []string{"real-bugs/*.txt", "anomalies/si/polysi/*/*.txt", "samples/text/*.txt"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 8)
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, root+"/"), func(t *testing.T) {
			h, err := Read(f, Options{})
			require.NoError(t, err)
			require.NoError(t, h.CheckInvariants())
			require.NotEmpty(t, h.Sessions)
			roundTrip(t, h)
		})
	}
}

func TestRealBugsInit(t *testing.T) {
	// dgraph_si.txt was converted by PolySI: its old initial transaction
	// writes value 1, so it stays an ordinary transaction (§4.4).
	h, err := Read(shared.Path(t, "real-bugs", "dgraph_si.txt"), Options{})
	require.NoError(t, err)
	require.Equal(t, history.InitImplicit, h.InitKind)
	require.Equal(t, int64(0), h.Txns[1].ID)
	require.Len(t, h.Txns[1].Ops, 1000)
	for _, f := range []string{"pg_ser_bug.txt", "yugabyte_tcc.txt"} {
		h, err := Read(shared.Path(t, "real-bugs", f), Options{})
		require.NoError(t, err)
		require.Equal(t, history.InitExplicit, h.InitKind, f)
	}
}

// genLines makes a text history of n lines: 10 sessions, 5 ops per txn.
func genLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		txn := i / 5
		op := "w"
		if i%2 == 1 {
			op = "r"
		}
		fmt.Fprintf(&b, "%s(%d,%d,%d,%d)\n", op, i%1000, i+1, txn%10, txn)
	}
	return b.Bytes()
}

// TestLinearTime guards against accidental quadratic behaviour without a
// wall-clock bound (which a busy machine would break): ten times the lines
// must cost far less than a hundred times the time.
func TestLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	best := func(n int) time.Duration {
		data := genLines(n)
		b := time.Hour
		for range 5 {
			start := time.Now()
			_, err := Parse(bytes.NewReader(data), "gen.txt", Options{})
			b = min(b, time.Since(start))
			require.NoError(t, err)
		}
		return b
	}
	small, large := best(10000), best(100000)
	t.Logf("10k lines: %v, 100k lines: %v", small, large)
	require.Less(t, large, 40*small, "parsing is not linear")
}

func BenchmarkParse100k(b *testing.B) {
	data := genLines(100000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), "gen.txt", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
