package formats

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/internal/shared"
)

// TestEveryDatasetLoadsWithDetection reads every history under the shared
// datasets through auto-detection, and checks the detected format.
func TestEveryDatasetLoadsWithDetection(t *testing.T) {
	ds := shared.Datasets(t)
	want := map[string]string{}
	f, err := os.Open(filepath.Join(ds, "expected.tsv"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		want[cols[0]] = cols[1]
	}
	for _, p := range []struct{ path, format string }{
		{"samples/dbcop/galera-polysi/history.bincode", "dbcop"},
		{"samples/dbcop/roachdb-cut", "dbcop"},
		{"samples/cobra/yuga-G2-a-cut", "cobra"},
		{"samples/cobra/cock-blog", "cobra"},
		{"samples/cobra/rubis-1k-cut", "cobra"},
		{"samples/text/galera.txt", "text"},
		{"samples/text/pg_ser_bug.txt", "text"},
		{"samples/text/yugabyte_tcc.txt", "text"},
		{"real-bugs/dgraph_si.txt", "text"},
		{"real-bugs/pg_ser_bug.txt", "text"},
		{"real-bugs/yugabyte_tcc.txt", "text"},
		{"anomalies/si/polysi/galera/galera.txt", "text"},
	} {
		want[p.path] = p.format
	}
	require.NoError(t, filepath.WalkDir(filepath.Join(ds, "weak-labelled"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(ds, path)
			want[rel] = "awdit"
		}
		return err
	}))
	for rel, format := range want {
		path := filepath.Join(ds, rel)
		got, err := Detect(path)
		require.NoError(t, err, rel)
		require.Equal(t, format, got, rel)
		h, err := Read(path, Options{})
		if err != nil && format == "awdit" && strings.Contains(err.Error(), "does not end with a newline") {
			// AWDIT's hand-written tests lack the final newline.
			h, err = Read(path, Options{Lenient: true})
		}
		require.NoError(t, err, rel)
		require.NoError(t, h.CheckInvariants(), rel)
		require.Equal(t, format, h.Format, rel)
	}
	t.Logf("%d histories detected and read", len(want))
}

func TestDetectRejectsWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	_, err := Detect(dir)
	require.ErrorIs(t, err, ErrUnrecognised)
	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = Detect(empty)
	require.ErrorIs(t, err, ErrUnrecognised)
	junk := filepath.Join(dir, "junk.bin")
	require.NoError(t, os.WriteFile(junk, []byte("\x01\x02garbage"), 0o644))
	_, err = Read(junk, Options{})
	require.ErrorIs(t, err, ErrUnrecognised)
	_, err = Read(junk, Options{Format: "nope"})
	require.ErrorContains(t, err, "unknown format")
	_, err = Read(junk, Options{Format: "cobra", CobraFlavour: "odd"})
	require.ErrorContains(t, err, "unknown Cobra flavour")
	// A JSON document over several lines (a robust workload) is said to be
	// one, not read as JSON Lines that fail on a field name.
	doc := filepath.Join(dir, "workload.json")
	require.NoError(t, os.WriteFile(doc, []byte("{\n  \"workload\": 1,\n  \"instances\": []\n}\n"), 0o644))
	_, err = Detect(doc)
	require.ErrorIs(t, err, ErrUnrecognised)
	require.ErrorContains(t, err, "workload.json:1: a JSON document written over several lines")
}

func TestCobraFlavourOverride(t *testing.T) {
	ds := shared.Datasets(t)
	for dir, own := range map[string]string{"bench/rubis-1k": "universal", "anomalies/ser/cobra/cock-blog": "unique"} {
		h, err := Read(filepath.Join(ds, dir), Options{})
		require.NoError(t, err)
		require.Equal(t, own, h.Meta["cobra.flavour"])
		other := map[string]string{"universal": "unique", "unique": "universal"}[own]
		h, err = Read(filepath.Join(ds, dir), Options{Format: "cobra", CobraFlavour: other})
		require.NoError(t, err)
		require.Equal(t, other, h.Meta["cobra.flavour"])
	}
}
