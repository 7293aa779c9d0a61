package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInputSize(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "T1.log")
	require.NoError(t, os.WriteFile(a, make([]byte, 300), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "T2.log"), make([]byte, 200), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.EqualValues(t, 300, InputSize(a, nil))
	require.EqualValues(t, 500, InputSize(dir, nil))
	require.EqualValues(t, 0, InputSize(filepath.Join(dir, "missing"), nil))
	f, err := os.Open(a)
	require.NoError(t, err)
	defer f.Close()
	require.EqualValues(t, 300, InputSize("-", f))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.EqualValues(t, 0, InputSize("-", r))
	require.EqualValues(t, 0, InputSize("-", strings.NewReader("x")))
}
