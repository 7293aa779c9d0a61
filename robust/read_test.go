package robust

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

func TestRobustParseWorkload(t *testing.T) {
	w, err := ReadFile("testdata/smallbank-fig5.json")
	require.NoError(t, err)
	require.Len(t, w.Instances, 6)
	wc := w.Instances[5]
	require.Equal(t, "WC(N1,V1)", wc.Name)
	require.Equal(t, "WriteCheck", wc.Type)
	require.Equal(t, history.SER, wc.Level)
	require.Len(t, wc.Reads, 3)
	require.Len(t, wc.Writes, 1)
	require.Equal(t, Pos{File: "testdata/smallbank-fig5.json", Line: 16, Col: 5}, wc.Pos)

	w, err = ReadFile("testdata/sessions.json")
	require.NoError(t, err)
	require.Equal(t, [][]int32{{2, 3}}, w.Sessions)
	require.True(t, w.soBefore(2, 3))
	require.False(t, w.soBefore(3, 2))
	require.Equal(t, int32(-1), w.Instances[0].Session)
}

func TestRobustParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[]`, "f:1:1: expected a mapping"}, {`{]`, "invalid JSON"},
		{`{"instances": [{"name": "a", "reads": ["x"], "level": "nope"}]}`, `f:1:46: instance "a": unknown level "nope" (robustness knows ` + SupportedList(", ") + ")"},
		{`{"instances": [{"name": "a", "reads": ["x"], "level": "rc"}]}`, `unknown level "rc"`},
		{`{"instances": [{"name": "a", "level": "ra"}]}`, `f:1:16: instance "a" has no keys`},
		{`{"instances": [{"name": "a", "reads": [], "writes": []}]}`, `instance "a" has no keys`},
		{`{"instances": [{"reads": ["x"]}]}`, "instance 1 has no name"},
		{`{"instances": [{"name": "a", "reads": ["x"]}, {"name": "a", "reads": ["y"]}]}`, `f:1:47: instance "a" is named twice (first at f:1:16)`},
		{"{\"instances\": [\n{\"name\": \"a\", \"reads\": [\"x\"], \"after\": \"b\"},\n{\"name\": \"b\", \"reads\": [\"x\"], \"after\": \"a\"}]}", `f:2:31: cycle in session order: a comes after b comes after a`},
		{`{"instances": [{"name": "a", "reads": ["x"], "after": "a"}]}`, `f:1:46: cycle in session order: instance "a" comes after itself`},
		{`{"instances": [{"name": "a", "reads": ["x"], "after": "c"}]}`, `comes after "c", which no instance is named`},
		{`{"instances": [{"name": "a", "reads": ["x"]}, {"name": "b", "reads": ["x"], "after": "a"}, {"name": "c", "reads": ["x"], "after": "a"}]}`, `both "b" and "c" come right after "a"`},
		{`{"instances": [{"name": "a", "reads": ["x"], "priority": 3}]}`, `f:1:46: unknown field "priority"`},
		{`{"instances": [], "extra": 1}`, `f:1:19: unknown field "extra"`},
		{`{"workload": 2, "instances": []}`, "version 2"},
		{`{"workload": 1}`, `no "instances"`},
		{`{"instances": [{"name": "a", "reads": "x"}]}`, "f:1:30: reads: expected []string"},
		{`{"instances": [{"name": "a", "reads": ["x"]}`, "unexpected end of input"},
		{`{"instances": []} {}`, "data after the workload object"},
		{`{"instances": [], "instances": []}`, `field "instances" given twice`},
		{`{"instances": [{"name": "a", "reads": [""]}]}`, "empty key"},
	} {
		_, err := Parse(strings.NewReader(c.in), "f")
		require.ErrorContains(t, err, c.want, c.in)
		var ie *InputError
		require.True(t, errors.As(err, &ie), c.in)
	}
}

func TestRobustWriteRoundTrip(t *testing.T) {
	for _, path := range []string{"testdata/smallbank-fig5.json", "testdata/sessions.json"} {
		w, err := ReadFile(path)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, w))
		back, err := Parse(&buf, path)
		require.NoError(t, err)
		requireSameWorkload(t, w, back)
	}
}

// requireSameWorkload compares what the analysis sees: names, types, key
// sets by name, levels and sessions.
func requireSameWorkload(t *testing.T, a, b *Workload) {
	t.Helper()
	require.Len(t, b.Instances, len(a.Instances))
	names := func(w *Workload, ks []KeyID) []string {
		var out []string
		for _, k := range ks {
			out = append(out, w.Keys[k])
		}
		return out
	}
	for i := range a.Instances {
		p, q := &a.Instances[i], &b.Instances[i]
		require.Equal(t, p.Name, q.Name)
		require.Equal(t, p.Type, q.Type)
		require.Equal(t, p.Level, q.Level)
		require.ElementsMatch(t, names(a, p.Reads), names(b, q.Reads))
		require.ElementsMatch(t, names(a, p.Writes), names(b, q.Writes))
	}
	require.Equal(t, a.Sessions, b.Sessions)
}

// FuzzParse: Parse never panics; what it accepts has keys on every
// instance and chains for sessions, and writes back to itself.
func FuzzRobustParse(f *testing.F) {
	f.Add(`{"workload": 1, "instances": [{"name": "a", "reads": ["x"], "writes": ["y"], "level": "psi"}, {"name": "b", "writes": ["x"], "after": "a"}]}`)
	f.Add(`{"instances": [{"name": "a", "reads": ["x"], "after": "b"}, {"name": "b", "reads": ["x"], "after": "a"}]}`)
	f.Add(`{"instances": [{"name": "a", "reads": ["x"], "level": "snapshot"}], "meta": {"k": "v"}}`)
	f.Add("workload: 1\ninstances:\n  - {name: a, reads: [x], writes: [y], level: psi}\n  - {name: b, writes: [x], after: a}\n")
	f.Add("programs:\n  - {name: P, params: [a, b], reads: ['k[{a}]'], writes: ['k[{b}]', '{{lit}}']}\ninstances:\n  - {name: i, program: P, args: {a: '1'}}\n  - {name: j, reads: ['k[2]']}\n")
	f.Add(`{"programs": [{"name": "P", "params": ["a"], "reads": ["x{a}"]}], "instances": [{"name": "i", "program": "P", "args": {"a": "1"}}, {"name": "j", "writes": ["x{b}y"]}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		w, err := Parse(strings.NewReader(in), "fuzz")
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		for i := range w.Instances {
			p := &w.Instances[i]
			if len(p.Reads)+len(p.Writes) == 0 {
				t.Fatalf("instance %q without keys accepted", p.Name)
			}
			if p.Session >= 0 && w.Sessions[p.Session][p.Index] != int32(i) {
				t.Fatalf("instance %q misplaced in its session", p.Name)
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, w); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(&buf, "fuzz")
		if err != nil {
			t.Fatalf("written workload does not read back: %v\n%s", err, buf.String())
		}
		requireSameWorkload(t, w, back)
		// Check and Allocate accept whatever Parse accepts.
		Allocate(w)
		if _, err := Check(w, CheckOptions{Default: history.SER}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRobustParseYAML(t *testing.T) {
	j, err := ReadFile("testdata/smallbank-fig5.json")
	require.NoError(t, err)
	var sb strings.Builder
	sb.WriteString("workload: 1\ninstances:\n")
	for i := range j.Instances {
		p := &j.Instances[i]
		q := func(ks []KeyID) string {
			var s []string
			for _, k := range ks {
				s = append(s, `"`+j.Keys[k]+`"`)
			}
			return "[" + strings.Join(s, ", ") + "]"
		}
		fmt.Fprintf(&sb, "  - name: %q\n    type: %s\n    reads: %s\n    writes: %s\n    level: %s\n", p.Name, p.Type, q(p.Reads), q(p.Writes), p.Level)
	}
	y, err := Parse(strings.NewReader(sb.String()), "f.yaml")
	require.NoError(t, err, sb.String())
	requireSameWorkload(t, j, y)
	require.Equal(t, Pos{File: "f.yaml", Line: 3, Col: 5}, y.Instances[0].Pos)

	for _, c := range []struct{ in, want string }{
		{"instances:\n  - name: a\n    reads: [x]\n    level: nope\n", `f:4:5: instance "a": unknown level "nope"`},
		{"instances:\n  - name: a\n    level: ra\n", `f:2:5: instance "a" has no keys`},
		{"instances:\n  - {name: a, reads: [x], after: b}\n  - {name: b, reads: [x], after: a}\n", `f:2:27: cycle in session order: a comes after b comes after a`},
		{"instances:\n  - name: a\n    reads: [x]\n    priority: 3\n", `f:4:5: unknown field "priority"`},
		{"instances: []\nextra: 1\n", `f:2:1: unknown field "extra"`},
		{"workload: 2\ninstances: []\n", "f:1:11: workload format version 2"},
		{"workload: 1\n", `no "instances"`},
		{"instances:\n  - name: a\n    reads: x\n", "f:3:12: reads: expected a sequence"},
		{"instances:\n  - name: a\n    reads: [x\n", "f:2: invalid YAML"},
		{"instances: []\n---\ninstances: []\n", "f:3:1: data after the workload"},
		{"instances: []\ninstances: []\n", `field "instances" given twice`},
		{"", "empty workload file"},
		{"- a\n", "f:1:1: expected a mapping"},
		{"instances:\n  - name: a\n    reads: [x]\n    args: {p: 1}\n", `f:4:5: instance "a": argument "p" binds no parameter`},
	} {
		_, err := Parse(strings.NewReader(c.in), "f")
		require.ErrorContains(t, err, c.want, c.in)
		var ie *InputError
		require.True(t, errors.As(err, &ie), c.in)
	}
}
