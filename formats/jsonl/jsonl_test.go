package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

func parse(t *testing.T, src string, opt Options) *history.History {
	t.Helper()
	h, err := Parse(strings.NewReader(src), "mem.jsonl", opt)
	require.NoError(t, err)
	require.NoError(t, h.CheckInvariants())
	return h
}

// describe renders sessions, T⊥ and aborted writes compactly.
func describe(h *history.History) string {
	var sb strings.Builder
	for _, s := range h.Sessions {
		fmt.Fprintf(&sb, "S%d:", s.ID)
		for _, t := range s.Txns {
			tx := &h.Txns[t]
			fmt.Fprintf(&sb, " T%d", tx.ID)
			if tx.Status != history.Committed {
				fmt.Fprintf(&sb, "/%v", tx.Status)
			}
			if tx.Level != history.LevelNone {
				fmt.Fprintf(&sb, "/%v", tx.Level)
			}
			fmt.Fprintf(&sb, "[%s]", strings.TrimSpace(opsString(h, tx.Ops)))
		}
		sb.WriteString("; ")
	}
	fmt.Fprintf(&sb, "init %v T%d[%s]", h.InitKind, h.Txns[0].ID, strings.TrimSpace(opsString(h, h.Txns[0].Ops)))
	if len(h.AbortedWrites) > 0 {
		sb.WriteString("; aborted")
		for _, v := range h.AbortedWrites {
			fmt.Fprintf(&sb, " (%s,%s)", keyOf(h, v.Key), valOf(h, v.Key, v.Value))
		}
	}
	return sb.String()
}

const E = history.EmptyList

// The example in FORMAT.md reads as the text there says.
func TestFormatDocExample(t *testing.T) {
	doc, err := os.ReadFile("FORMAT.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```jsonl\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, m)
	h := parse(t, string(m[1]), Options{})
	require.Equal(t, fmt.Sprintf("S1: T1[w(1,10) r(2,0)] T3/aborted[w(1,11)]; S2: T2/si[r(1,10) w(2,20)]; "+
		"S3: T4[append(7,1) r-list(7,1,[1]) r(8,%d)]; init implicit T-1[w(1,0) w(2,0) w(7,%d) w(8,%d)]; aborted (2,99)", E, E, E),
		describe(h))
	require.Equal(t, map[string]string{"db": "postgres-15"}, h.Meta)
	require.Empty(t, h.Warnings)
	_, out, err := roundTrip(h)
	require.NoError(t, err)
	require.Equal(t, `{"hyperiso":1,"init":"zero","trailer":true,"meta":{"db":"postgres-15"}}
{"session":1,"id":1,"ops":[["w",1,10],["r",2,0]]}
{"session":2,"id":2,"level":"si","ops":[["r",1,10],["w",2,20]]}
{"session":1,"id":3,"status":"aborted","ops":[["w",1,11]]}
{"session":3,"id":4,"ops":[["append",7,1],["r",7,[1]],["r",8,null]]}
{"aborted_writes":[[2,99]]}
{"end":{"transactions":4,"operations":8,"lines":6}}
`, out)
}

func TestInitKinds(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no header: zero", `{"session":1,"ops":[["r",5,0]]}`,
			"S1: T1[r(5,0)]; init implicit T-1[w(5,0)]"},
		{"no header, init line: explicit", "{\"init\":true,\"ops\":[[\"w\",5,0]]}\n{\"session\":1,\"ops\":[[\"r\",5,0],[\"r\",6,0]]}",
			"S1: T1[r(5,0) r(6,0)]; init explicit T0[w(5,0)]"},
		{"zero with overrides", "{\"hyperiso\":1,\"init\":\"zero\"}\n{\"init\":true,\"id\":-5,\"ops\":[[\"w\",5,3],[\"w\",9,9]]}\n{\"session\":1,\"ops\":[[\"r\",5,3],[\"r\",6,null],[\"r\",4,0]]}",
			fmt.Sprintf("S1: T1[r(5,3) r(6,%d) r(4,0)]; init implicit T-5[w(4,0) w(5,3) w(6,%d) w(9,9)]", E, E)},
		{"implicit is exact", "{\"hyperiso\":1,\"init\":\"implicit\"}\n{\"init\":true,\"ops\":[[\"w\",5,3]]}\n{\"session\":1,\"ops\":[[\"r\",6,1]]}",
			"S1: T1[r(6,1)]; init implicit T-1[w(5,3)]"},
		{"implicit without init line", "{\"hyperiso\":1,\"init\":\"implicit\"}\n{\"session\":1,\"ops\":[[\"r\",6,1]]}",
			"S1: T1[r(6,1)]; init implicit T-1[]"},
		{"explicit without init line", "{\"hyperiso\":1,\"init\":\"explicit\"}\n{\"session\":1,\"ops\":[[\"r\",6,1]]}",
			"S1: T1[r(6,1)]; init explicit T0[]"},
		{"none", "{\"hyperiso\":1,\"init\":\"none\"}\n{\"init\":true,\"id\":1,\"ops\":[]}\n{\"session\":1,\"id\":1,\"ops\":[[\"r\",6,1]]}",
			"S1: T1[r(6,1)]; init none T1[]"},
		{"header only", `{"hyperiso":1}`, "init implicit T-1[]"},
		{"aborted keys are zero-initialised", `{"aborted_writes":[[3,4]]}`, "init implicit T-1[w(3,0)]; aborted (3,4)"},
		{"list keys get the empty value", `{"session":1,"ops":[["append",1,5],["r",2,[]],["w",3,1],["r",3,null]]}`,
			fmt.Sprintf("S1: T1[append(1,5) r-list(2,%d,[]) w(3,1) r(3,%d)]; init implicit T-1[w(1,%d) w(2,%d) w(3,%d)]", E, E, E, E, E)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := parse(t, tc.src, Options{})
			require.Equal(t, tc.want, describe(h))
			_, _, err := roundTrip(h)
			require.NoError(t, err)
		})
	}
}

func TestFields(t *testing.T) {
	src := `{"hyperiso":1,"sessions":[9,3,4],"key_names":[[1,"x"],[2,"the \"y\" \u00e9\ud83d\ude42"]],"meta":{"a":"1","b":""}}

  {"ops":[], "session":3 , "id":-7,"status":"unknown","level":"serializable"}  ` + "\r" + `
{"session":4,"ops":[["w",1,1]],"level":"rc","status":"committed"}
{"aborted_writes":[]}
{"session":5,"ops":[]}`
	h := parse(t, src, Options{})
	require.Equal(t, `S9:; S3: T-7/unknown/ser[]; S4: T2/rc[w("x",1)]; S5: T3[]; init implicit T-1[w("x",0) w("the \"y\" é🙂",0)]`, describe(h))
	require.Equal(t, map[string]string{"a": "1", "b": ""}, h.Meta)
	require.Equal(t, []string{"x", "the \"y\" é🙂"}, h.KeyNames)
	require.Equal(t, history.Pos{File: "mem.jsonl", Line: 3}, h.Txns[1].Pos)
	_, out, err := roundTrip(h)
	require.NoError(t, err)
	// Key 1 is written by its name; key 2, named but used nowhere, keeps
	// its name in the header.
	require.True(t, strings.HasPrefix(out, `{"hyperiso":1,"init":"zero","trailer":true,"meta":{"a":"1","b":""},"sessions":[9,3,4,5],"key_names":[[2,"the \"y\" é🙂"]]}`+"\n"), out)
	require.Contains(t, out, `{"session":4,"id":2,"level":"rc","ops":[["w","x",1]]}`)
}

func TestNumbers(t *testing.T) {
	h := parse(t, `{"session":-9223372036854775808,"id":9223372036854775807,"ops":[["w",-9223372036854775808,9223372036854775807],["r",-0,-1],["w",9007199254740993,1]]}`, Options{})
	require.Equal(t, "S-9223372036854775808: T9223372036854775807[w(-9223372036854775808,9223372036854775807) r(0,-1) w(9007199254740993,1)]; init implicit T-1[w(-9223372036854775808,0) w(0,0) w(9007199254740993,0)]", describe(h))
	_, _, err := roundTrip(h)
	require.NoError(t, err)
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		want      string
	}{
		{"empty", "", 1, "empty file"},
		{"blank only", "\n  \n\t\n", 1, "empty file"},
		{"not UTF-8", `{"session":1,"ops":[]}` + "\n{\"session\":1,\"ops\":[],\"x\":\"\xff\"}", 2, "line is not valid UTF-8"},
		{"not an object", `[1,2]`, 1, "column 1: expected '{' (each line is one JSON object), found an array"},
		{"truncated", `{"session":1,"ops":[["w",1,2]`, 1, `"ops": expected ',' or ']' after ops[0], found end of line`},
		{"two objects", `{"session":1,"ops":[]}{"session":1,"ops":[]}`, 1, "column 23: expected the end of the line after the object (one object per line), found an object"},
		{"trailing comma", `{"session":1,"ops":[],}`, 1, "field name: expected a string"},
		{"single quotes", `{'session':1}`, 1, "field name: expected a string"},
		{"unknown field", `{"session":1,"ops":[],"sesion":2}`, 1, `column 23: unknown field "sesion"`},
		{"duplicate field", `{"session":1,"session":2,"ops":[]}`, 1, `duplicate field "session"`},
		{"missing session", `{"ops":[]}`, 1, `missing field "session"`},
		{"missing ops", `{"session":1}`, 1, `missing field "ops"`},
		{"empty object", `{}`, 1, `missing field "session"`},
		{"float", `{"session":1.5,"ops":[]}`, 1, `"session": expected an integer, found 1.5`},
		{"exponent", `{"session":1,"ops":[["w",1,1e3]]}`, 1, `ops[0] value: expected an integer, found 1e3`},
		{"float zero", `{"session":1,"ops":[["w",1.0,1]]}`, 1, `ops[0] key: expected an integer, found 1.0`},
		{"too big", `{"session":1,"ops":[["w",1,9223372036854775808]]}`, 1, "ops[0] value: 9223372036854775808 is out of the int64 range"},
		{"too small", `{"session":-9223372036854775809,"ops":[]}`, 1, "out of the int64 range"},
		{"leading zero", `{"session":01,"ops":[]}`, 1, "leading zero"},
		{"string number", `{"session":"1","ops":[]}`, 1, `"session": expected an integer, found a string`},
		{"unknown op", `{"session":1,"ops":[["x",1,1]]}`, 1, `ops[0]: unknown operation "x" (want "r", "w", "append", "insert", "delete" or "select")`},
		{"upper-case op", `{"session":1,"ops":[["W",1,1]]}`, 1, `unknown operation "W"`},
		{"two elements", `{"session":1,"ops":[["w",1]]}`, 1, "ops[0]: expected 3 elements [op, key, value], found ']' after the key"},
		{"four elements", `{"session":1,"ops":[["w",1,2,3]]}`, 1, "ops[0]: too many elements"},
		{"op not an array", `{"session":1,"ops":[{"w":1}]}`, 1, "ops[0]: expected an operation"},
		{"write of a list", `{"session":1,"ops":[["w",1,[1]]]}`, 1, "ops[0] value: expected an integer or a string, found an array"},
		{"write of null", `{"session":1,"ops":[["append",1,null]]}`, 1, "ops[0] value: expected an integer or a string, found null"},
		{"read of an object", `{"session":1,"ops":[["r",1,{}]]}`, 1, "ops[0] value: expected an integer, a string, a list or null, found an object"},
		{"list of booleans", `{"session":1,"ops":[["r",1,[true]]]}`, 1, "ops[0] list element: expected an integer or a string, found a boolean"},
		{"empty string key", `{"session":1,"ops":[["r","",1]]}`, 1, "ops[0] key: the empty string is not a key or value"},
		{"empty string value", `{"session":1,"ops":[["w",1,""]]}`, 1, "ops[0] value: the empty string is not a key or value"},
		{"bad status", `{"session":1,"ops":[],"status":"ok"}`, 1, `unknown status "ok"`},
		{"bad level", `{"session":1,"ops":[],"level":"bogus"}`, 1, `unknown level "bogus"`},
		{"duplicate id", "{\"session\":1,\"ops\":[]}\n{\"session\":2,\"id\":1,\"ops\":[]}", 2, "transaction id 1 already used on line 1"},
		{"duplicate assigned id", "{\"session\":1,\"id\":2,\"ops\":[]}\n{\"session\":2,\"ops\":[]}", 2, "transaction id 2 already used on line 1"},
		{"late header", "{\"session\":1,\"ops\":[]}\n{\"hyperiso\":1}", 2, "the header (the object with \"hyperiso\") must be the first line"},
		{"version", `{"hyperiso":2}`, 1, "unsupported format version 2"},
		{"init kind", `{"hyperiso":1,"init":"zeros"}`, 1, `unknown kind "zeros"`},
		{"init kind bool", `{"hyperiso":1,"init":true}`, 1, `header field "init": expected`},
		{"header with ops", `{"hyperiso":1,"ops":[]}`, 1, `field "ops" is not allowed in the header`},
		{"txn with meta", `{"session":1,"ops":[],"meta":{}}`, 1, `field "meta" is not allowed in a transaction line`},
		{"meta not string", `{"hyperiso":1,"meta":{"a":1}}`, 1, `"meta" value of "a" (values are strings): expected a string, found a number`},
		{"duplicate session list", `{"hyperiso":1,"sessions":[1,1]}`, 1, "session 1 listed twice"},
		{"duplicate key name", `{"hyperiso":1,"key_names":[[1,"a"],[1,"b"]]}`, 1, "key 1 named twice"},
		{"init false", `{"init":false,"ops":[]}`, 1, `field "init": expected true`},
		{"init string without header", `{"init":"zero"}`, 1, `field "init": expected true`},
		{"init after txn", "{\"session\":1,\"ops\":[]}\n{\"init\":true,\"ops\":[]}", 2, "the init line must precede all transactions"},
		{"second init", "{\"init\":true,\"ops\":[]}\n{\"init\":true,\"ops\":[]}", 2, "a second init line (the first is on line 1)"},
		{"init reads", `{"init":true,"ops":[["r",1,1]]}`, 1, `ops[0]: the init line may only write ("w"), found "r"`},
		{"init key twice", `{"init":true,"ops":[["w",1,1],["w",1,2]]}`, 1, "ops[1]: key 1 written twice by the init line"},
		{"init with session", `{"init":true,"session":1,"ops":[]}`, 1, `field "session" is not allowed in the init line`},
		{"none with writes", "{\"hyperiso\":1,\"init\":\"none\"}\n{\"init\":true,\"ops\":[[\"w\",1,0]]}", 2, `"none" but the init line writes`},
		{"id collides with init", "{\"init\":true,\"id\":4,\"ops\":[]}\n{\"session\":1,\"id\":4,\"ops\":[]}", 2, "transaction id 4 is also the initial transaction's id"},
		{"id collides with default init", `{"session":1,"id":-1,"ops":[]}`, 1, "transaction id -1 is also the initial transaction's id"},
		{"aborted with extra", `{"aborted_writes":[[1,2]],"id":1}`, 1, `field "id" is not allowed in an aborted_writes line`},
		{"aborted triple", `{"aborted_writes":[[1,2,3]]}`, 1, "a pair has two elements"},
		{"bad escape", `{"hyperiso":1,"meta":{"a":"\q"}}`, 1, `invalid escape \q`},
		{"raw control char", "{\"hyperiso\":1,\"meta\":{\"a\":\"\t\"}}", 1, "control character 0x09 in a string must be escaped"},
		{"unterminated string", `{"hyperiso":1,"meta":{"a":"b}}`, 1, "unterminated string"},
		{"bad literal", `{"session":1,"ops":[["r",1,nul]]}`, 1, "invalid literal, expected null"},
		{"BOM", "\ufeff{\"session\":1,\"ops\":[]}", 1, "byte order mark"},
		{"lone CR separates nothing", "{\"session\":1,\"ops\":[]}\r{\"session\":1,\"ops\":[]}", 1, "expected the end of the line after the object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.src), "mem.jsonl", Options{})
			require.Error(t, err)
			var ie *history.InputError
			require.True(t, errors.As(err, &ie), "%T %v", err, err)
			require.Equal(t, "mem.jsonl", ie.Pos.File)
			require.Equal(t, tc.line, ie.Pos.Line, err.Error())
			require.Contains(t, err.Error(), fmt.Sprintf("mem.jsonl:%d: ", tc.line))
			require.Contains(t, err.Error(), tc.want)

			// Lenient mode never fails on these (collisions with T⊥'s id
			// are not a line's fault and stay errors).
			h, err := Parse(strings.NewReader(tc.src), "mem.jsonl", Options{Lenient: true})
			if strings.HasPrefix(tc.name, "id collides") {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.NoError(t, h.CheckInvariants())
			require.NotEmpty(t, h.Warnings)
		})
	}
}

func TestLenient(t *testing.T) {
	src := `{"hyperiso":1,"extra":{"nested":[1,2.5,{"a":null}]},"ops":[]}
{"session":1,"ops":[["w",1,1]],"ts":1.5e9,"session":7}
not json
{"session":1,"ops":[["w",1,2]],"status":"bogus"}
{"session":1,"ops":[["r",1,1]]}`
	h := parse(t, src, Options{Lenient: true})
	require.Equal(t, "S1: T1[w(1,1)] T2[r(1,1)]; init implicit T-1[w(1,0)]", describe(h))
	var msgs []string
	for _, w := range h.Warnings {
		msgs = append(msgs, w.String())
	}
	require.Equal(t, []string{
		`mem.jsonl:1: column 15: unknown field "extra" ignored`,
		`mem.jsonl:1: field "ops" ignored: not allowed in the header`,
		`mem.jsonl:2: column 32: unknown field "ts" ignored`,
		`mem.jsonl:2: column 43: duplicate field "session" ignored`,
		`mem.jsonl:3: line skipped: column 1: expected '{' (each line is one JSON object), found 'n'`,
		`mem.jsonl:4: line skipped: column 41: "status": unknown status "bogus" (want "committed", "aborted" or "unknown")`,
	}, msgs)
}

// T⊥'s writes go through a transient session whose id must be unused.
func TestTransientSessionID(t *testing.T) {
	h := parse(t, `{"session":-9223372036854775808,"ops":[["append",1,1]]}
{"session":-9223372036854775807,"ops":[]}`, Options{})
	require.Equal(t, fmt.Sprintf("S-9223372036854775808: T1[append(1,1)]; S-9223372036854775807: T2[]; init implicit T-1[w(1,%d)]", E), describe(h))
}

func TestEmptyValueWarning(t *testing.T) {
	h := parse(t, fmt.Sprintf(`{"session":1,"ops":[["w",1,%d]]}`, E), Options{})
	require.Len(t, h.Warnings, 1)
	require.Contains(t, h.Warnings[0].Msg, "stands for an empty list")
}

func TestWriteErrors(t *testing.T) {
	b := history.NewBuilder("x", "test")
	b.InitWrite(1, 0) // InitKind stays none
	require.ErrorContains(t, Write(&bytes.Buffer{}, b.Finish()), "InitKind is none but T⊥ writes")

	b = history.NewBuilder("x", "test")
	t1 := b.Begin(b.Session(1), 1, history.Committed, history.Pos{})
	b.ReadList(t1, 1, nil, 5)
	require.ErrorContains(t, Write(&bytes.Buffer{}, b.Finish()), "reads an empty list of key 1 as value 5")

	b = history.NewBuilder("x", "test")
	b.Begin(b.Session(1), 7, history.Committed, history.Pos{})
	b.Begin(b.Session(2), 7, history.Committed, history.Pos{})
	require.ErrorContains(t, Write(&bytes.Buffer{}, b.Finish()), "transaction id 7 is used twice")

	b = history.NewBuilder("x", "test")
	b.SetInit(history.InitExplicit, 7)
	b.Begin(b.Session(1), 7, history.Committed, history.Pos{})
	require.ErrorContains(t, Write(&bytes.Buffer{}, b.Finish()), "transaction id 7 is used twice")

	b = history.NewBuilder("x", "test") // under InitNone T⊥'s id does not count
	b.Begin(b.Session(1), 0, history.Committed, history.Pos{})
	require.NoError(t, Write(&bytes.Buffer{}, b.Finish()))

	require.Error(t, Write(&bytes.Buffer{}, &history.History{}))
	var w failWriter
	b = history.NewBuilder("x", "test")
	b.Begin(b.Session(1), 1, history.Committed, history.Pos{})
	require.ErrorIs(t, Write(w, b.Finish()), errFail)
}

var errFail = errors.New("disk full")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	_, err := Read(filepath.Join(dir, "missing.jsonl"), Options{})
	require.ErrorIs(t, err, os.ErrNotExist)
	p := filepath.Join(dir, "h.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(`{"session":1,"ops":[["w",1,1]]}`), 0o644))
	h, err := Read(p, Options{})
	require.NoError(t, err)
	require.Equal(t, p, h.Source)
	require.Equal(t, Format, h.Format)
	_, err = Parse(errReader{}, "x", Options{})
	require.ErrorContains(t, err, "x: boom")
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestLongLines(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"session":1,"ops":[`)
	for i := range 50000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `["w",%d,%d]`, i, i)
	}
	sb.WriteString("]}\n")
	sb.WriteString(`{"session":2,"ops":[["r",7,7]]}`)
	h := parse(t, sb.String(), Options{})
	require.Len(t, h.Txns[1].Ops, 50000)
	require.Equal(t, 2, h.Txns[2].Pos.Line)
}

// Random builder-made histories survive Write→Read exactly.
func TestRoundTripRandom(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	r := rand.New(rand.NewPCG(1, 2))
	kinds := map[string]int{}
	for i := range n {
		h := randomHistory(r)
		require.NoError(t, h.CheckInvariants(), "history %d", i)
		_, out, err := roundTrip(h)
		require.NoError(t, err, "history %d", i)
		kinds[strings.SplitN(out, "\n", 2)[0][len(`{"hyperiso":1,"init":`):][:6]]++
	}
	// Every initial-state kind was exercised.
	require.Len(t, kinds, 4, "%v", kinds)
}

// genHistory builds a history of n transactions with opsPer operations each.
func genHistory(n, opsPer int) *history.History {
	r := rand.New(rand.NewPCG(7, 7))
	b := history.NewBuilder("gen", "test")
	b.SetInit(history.InitImplicit, -1)
	for i := range n {
		t := b.Begin(b.Session(int64(i%50)), int64(i+1), history.Committed, history.Pos{})
		for j := range opsPer {
			k := int64(r.IntN(10000))
			if j%2 == 0 {
				b.Write(t, k, int64(r.Uint64()))
			} else {
				b.Read(t, k, int64(r.Uint64()))
			}
		}
	}
	b.InitAllKeys(0)
	return b.Finish()
}

func TestReadSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, genHistory(100000, 10)))
	best := time.Hour
	for range 3 {
		start := time.Now()
		h, err := Parse(bytes.NewReader(buf.Bytes()), "gen.jsonl", Options{})
		require.NoError(t, err)
		require.Len(t, h.Txns, 100001)
		best = min(best, time.Since(start))
	}
	t.Logf("read 100k transactions, 1M operations, %d MB: %v (%.2f M ops/s)", buf.Len()>>20, best, 1/best.Seconds())
}

func BenchmarkRead100k(b *testing.B) {
	var buf bytes.Buffer
	if err := Write(&buf, genHistory(100000, 10)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(buf.Bytes()), "gen.jsonl", Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkWrite100k(b *testing.B) {
	h := genHistory(100000, 10)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Write(&buf, h); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "ops/s")
}
