package formats

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestByteOrderMark: a UTF-8 byte-order mark is refused the same way in
// every text format, naming the file, line 1 and what follows it, and
// skipped with --lenient (issue 26: it said "unrecognised history format"
// with no position, and a Viper log with one was read as Cobra).
func TestByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, format string }{
		{"h.jsonl", `{"session":1,"ops":[["w",1,1]]}` + "\n", "jsonl"},
		{"h", `{"session":1,"ops":[["w",1,1]]}` + "\n", "jsonl"},
		{"h.txt", "r(1,0,1,1)\n", "text"},
		{"h.awdit", "w 1 1\n---\nr 1 1\n", "awdit"},
		{"h.edn", "{:type :ok, :f :txn, :process 0, :value [[:append 1 1]]}\n", "elle"},
		{"v", `{"value": [["w", 1, 5, true]]}` + "\n", "viper"},
	} {
		p := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o644))
		plain, err := Read(p, Options{})
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.format, plain.Format)
		require.NoError(t, os.WriteFile(p, []byte("\ufeff"+tc.content), 0o644))
		for _, opt := range []Options{{}, {Format: tc.format}} {
			_, err = Read(p, opt)
			require.Error(t, err, tc.name)
			require.Contains(t, err.Error(), p+":1: column 1: a UTF-8 byte-order mark", tc.name)
			require.Contains(t, err.Error(), "of a "+tc.format+" history", tc.name)
			opt.Lenient = true
			h, err := Read(p, opt)
			require.NoError(t, err, tc.name)
			require.Equal(t, tc.format, h.Format, tc.name)
			require.Equal(t, len(plain.Txns), len(h.Txns), tc.name)
			require.Contains(t, h.Warnings[0].Msg, "byte-order mark", tc.name)
		}
		_, err = Read(StdinPath, Options{Stdin: strings.NewReader("\ufeff" + tc.content)})
		require.ErrorContains(t, err, "<stdin>:1: column 1: a UTF-8 byte-order mark", tc.name)
	}

	// A Viper directory whose logs have one: detected as Viper, refused
	// with the log's position.
	vd := filepath.Join(dir, "viper")
	require.NoError(t, os.Mkdir(vd, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(vd, "J0.log"), []byte("\ufeff"+`{"value": [["w", 1, 5, true]]}`+"\n"), 0o644))
	f, err := Detect(vd)
	require.NoError(t, err)
	require.Equal(t, "viper", f)
	_, err = Read(vd, Options{})
	require.ErrorContains(t, err, "J0.log:1: column 1: a UTF-8 byte-order mark")
	h, err := Read(vd, Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, "viper", h.Format)
}

// TestUnrecognisedSaysWhere: an unrecognised file names the line and
// quotes what it begins with.
func TestUnrecognisedSaysWhere(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h")
	require.NoError(t, os.WriteFile(p, []byte("\n\nhello \x1b[2J world\n"), 0o644))
	_, err := Read(p, Options{})
	require.True(t, errors.Is(err, ErrUnrecognised), "%v", err)
	require.Contains(t, err.Error(), p+":3: unrecognised history format")
	require.Contains(t, err.Error(), `"hello \x1b[2J world"`)
	require.NotContains(t, err.Error(), "\x1b")
}

// TestViperEmptyFirstLog: a Viper directory whose first log is empty (a
// session without transactions) is still Viper, not Cobra.
func TestViperEmptyFirstLog(t *testing.T) {
	vd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(vd, "J0.log"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(vd, "J1.log"), []byte(`{"value": [["w", 1, 5, true]]}`+"\n"), 0o644))
	f, err := Detect(vd)
	require.NoError(t, err)
	require.Equal(t, "viper", f)
}
