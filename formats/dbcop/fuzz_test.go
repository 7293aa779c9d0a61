package dbcop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// fuzzOptions decodes the mode byte: bit 0 lenient, bit 1 drop aborted.
func fuzzOptions(mode uint8) Options {
	return Options{Lenient: mode&1 != 0, DropAborted: mode&2 != 0}
}

// FuzzParse: no input panics; the reader agrees with the reference reader
// (reference_test.go); an error is an *InputError inside the data;
// a success is a consistent history; and knowing the size or not changes
// only how early an impossible length is refused, never the outcome.
func FuzzParse(f *testing.F) {
	d := demo(f)
	f.Add(d, uint8(0))
	f.Add(d, uint8(3))
	f.Add(simple().bytes(), uint8(0))
	f.Add(d[:0x90], uint8(0))
	bad := bytes.Clone(d)
	bad[0x8e] = 7
	f.Add(bad, uint8(1))
	huge := bytes.Clone(d)
	binary.LittleEndian.PutUint64(huge[0x86:], 1<<62)
	f.Add(huge, uint8(0))
	utf := bytes.Clone(d)
	utf[0x31] = 0xfe
	f.Add(utf, uint8(1))
	if dir := shared.Dir(); dir != "" {
		for _, s := range []string{"galera-polysi", "roachdb-cut"} {
			b, err := os.ReadFile(filepath.Join(dir, "datasets", "samples", "dbcop", s, FileName))
			require.NoError(f, err)
			f.Add(b, uint8(0))
			f.Add(b, uint8(2))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opt := fuzzOptions(mode)
		h, err := Parse(bytes.NewReader(data), "fuzz", int64(len(data)), opt)
		h2, err2 := Parse(bytes.NewReader(data), "fuzz", -1, opt)
		want, wantErr := refParse(bytes.NewReader(data), "fuzz", int64(len(data)), opt)
		if wantErr != nil {
			require.Error(t, err)
			require.Equal(t, wantErr.Error(), err.Error())
		} else {
			require.NoError(t, err)
			sameHistory(t, want, h)
		}
		for _, e := range []error{err, err2} {
			if e != nil {
				var ie *history.InputError
				require.True(t, errors.As(e, &ie), "%T %v", e, e)
				require.Equal(t, "fuzz", ie.Pos.File)
				require.True(t, ie.Pos.Offset >= 0 && ie.Pos.Offset <= int64(len(data)), "%v", e)
			}
		}
		require.Equal(t, err == nil, err2 == nil, "sized: %v, unsized: %v", err, err2)
		if err != nil {
			return
		}
		checkConsistent(t, h)
		require.Equal(t, count(h), count(h2))
		require.Equal(t, h.Meta, h2.Meta)
		require.LessOrEqual(t, len(h.Txns)-1, len(data)/minTxnSize)
		require.LessOrEqual(t, count(h).writes+count(h).reads, len(data)/eventSize)
		for _, op := range h.Txns[0].Ops {
			require.Equal(t, int64(0), h.Value(op.Key, op.Value), "initial values are 0")
		}
	})
}
