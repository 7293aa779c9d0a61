package formats

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// TestDetectViper: a directory of Viper's JSON logs, one such log as a
// file and the same log as a stream are all detected and read as Viper.
func TestDetectViper(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "json")
	require.NoError(t, os.Mkdir(dir, 0o755))
	j1 := `{"value": [["w", 1, 2, true], ["r", 2, null, false]]}` + "\n"
	j2 := `{"value": [["r", 1, 2, false]]}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "J24.log"), []byte(j1), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "J25.log"), []byte(j2), 0o644))
	f, err := Detect(dir)
	require.NoError(t, err)
	require.Equal(t, "viper", f)
	h, err := Read(dir, Options{})
	require.NoError(t, err)
	require.Equal(t, "viper", h.Format)
	require.Len(t, h.Sessions, 2)
	require.Equal(t, int64(24), h.Sessions[0].ID)

	one := filepath.Join(dir, "J24.log")
	f, err = Detect(one)
	require.NoError(t, err)
	require.Equal(t, "viper", f)
	h, err = ReadStream(bytes.NewReader([]byte(j1)), StdinName, Options{})
	require.NoError(t, err)
	require.Equal(t, "viper", h.Format)
	require.Len(t, h.Txns, 2)

	_, err = ReadStream(bytes.NewReader([]byte(j1)), StdinName, Options{Format: "viper"})
	require.NoError(t, err)
}

// TestViperSample reads the shared sample as docs/formats.md describes it:
// one session of three committed transactions, 8 writes, 8 reads, 8 writes.
func TestViperSample(t *testing.T) {
	h, err := Read(shared.Path(t, "samples", "viper-json"), Options{})
	require.NoError(t, err)
	require.Equal(t, "viper", h.Format)
	require.Len(t, h.Sessions, 1)
	require.Equal(t, int64(24), h.Sessions[0].ID)
	require.Len(t, h.Txns, 4)
	for i, kind := range []history.OpKind{history.OpWrite, history.OpRead, history.OpWrite} {
		tx := h.Txns[i+1]
		require.Equal(t, history.Committed, tx.Status)
		require.Len(t, tx.Ops, 8)
		for _, op := range tx.Ops {
			require.Equal(t, kind, op.Kind)
		}
	}
	require.Equal(t, int64(9696), h.Key(h.Txns[1].Ops[0].Key))
	require.Equal(t, int64(2046010677777358256), h.Value(h.Txns[1].Ops[0].Key, h.Txns[1].Ops[0].Value))
}
