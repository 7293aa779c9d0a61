package cobra

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/shared"
)

// fuzzLogs decodes the mode byte: bits 0–1 the flavour (3 = auto), bit 2
// lenient, bit 3 split the data in two logs (to reach cross-file checks).
func fuzzLogs(data []byte, mode uint8) ([]Log, map[string]int, Options) {
	opt := Options{Flavour: Flavour(mode & 3 % 3), Lenient: mode&4 != 0}
	parts := map[string][]byte{"T1.log": data}
	if mode&8 != 0 {
		parts = map[string][]byte{"T1.log": data[:len(data)/2], "T2.log": data[len(data)/2:]}
	}
	var logs []Log
	sizes := map[string]int{}
	for name, p := range parts {
		logs = append(logs, Log{Name: name, Data: bytes.NewReader(p)})
		sizes[name] = len(p)
	}
	return logs, sizes, opt
}

// FuzzParseLog: no input panics; the reader agrees with the reference
// reader (reference_test.go); an error is an *InputError inside one of
// the logs; a success is a consistent history, and a strict success reads
// the same in lenient mode.
func FuzzParseLog(f *testing.F) {
	yuga := logOf(
		S(1), initRead(0, 0), W(100, 3, 5), W(101, 2, 3), C(1),
		S(2), W(102, 3, 11), R(1, 101, 2, 3), C(2),
	)
	f.Add(yuga, uint8(3))
	f.Add(yuga, uint8(8+3))
	f.Add(logOf(S(1), uW(1, 1), nullRead(2), C(1), S(2), uR(1, 1), uW(1, 1), C(2)), uint8(0))
	f.Add(logOf(S(1), W(1, 1, 1), C(1), S(2), W(1, 1, 1), C(2)), uint8(1))
	f.Add(logOf(S(1), W(1, 1, 1))[:20], uint8(4))
	f.Add(logOf(S(1), C(1), rec{'A'}), uint8(0))
	f.Add([]byte(`{"value": [[`), uint8(0))
	if dir := shared.Dir(); dir != "" {
		for _, p := range []string{"yuga-G2-a-cut/T6.log", "rubis-1k-cut/T30.log", "cock-blog/T15.log"} {
			b, err := os.ReadFile(filepath.Join(dir, "datasets", "samples", "cobra", p))
			require.NoError(f, err)
			f.Add(b, uint8(3))
			f.Add(b, uint8(8+4+1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		logs, sizes, opt := fuzzLogs(data, mode)
		h, err := ParseLogs("fuzz", logs, opt)
		refLogs, _, _ := fuzzLogs(data, mode)
		want, wantErr := refParseLogs("fuzz", refLogs, opt)
		if wantErr != nil {
			require.Error(t, err)
			require.Equal(t, wantErr.Error(), err.Error())
		} else {
			require.NoError(t, err)
			sameHistory(t, want, h)
		}
		if err != nil {
			var ie *history.InputError
			require.True(t, errors.As(err, &ie), "%T %v", err, err)
			size, ok := sizes[ie.Pos.File]
			require.True(t, ok, "error names a log: %v", err)
			require.True(t, ie.Pos.Offset >= 0 && ie.Pos.Offset <= int64(size), "%v", err)
			return
		}
		checkConsistent(t, h)
		c := count(h)
		require.LessOrEqual(t, c.committed+c.unknown, len(data)/9)
		require.LessOrEqual(t, c.writes+c.reads, len(data)/25)
		if !opt.Lenient {
			require.Zero(t, c.unknown)
			logs, _, opt := fuzzLogs(data, mode|4)
			h2, err := ParseLogs("fuzz", logs, opt)
			require.NoError(t, err)
			require.Equal(t, c, count(h2))
		}
	})
}
