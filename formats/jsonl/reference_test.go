package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/stretchr/testify/require"
)

// referenceParse is a plain reading of the transaction lines randomLines
// writes: encoding/json per line, and the Builder's one-operation-at-a-time
// methods. It knows nothing of the fast reader's scanner, pipeline or
// grouped interning.
func referenceParse(t *testing.T, data []byte) *history.History {
	t.Helper()
	b := history.NewBuilder("x.jsonl", Format)
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var l struct {
			Session int64
			ID      int64
			Ops     [][]json.RawMessage
		}
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		require.NoError(t, d.Decode(&l), "line %d", i+1)
		txn := b.Begin(b.Session(l.Session), l.ID, history.Committed, history.Pos{File: "x.jsonl", Line: i + 1})
		for _, op := range l.Ops {
			var kind string
			require.NoError(t, json.Unmarshal(op[0], &kind))
			var key history.KeyID
			var ki int64
			if json.Unmarshal(op[1], &ki) == nil {
				key = b.KeyID(ki)
			} else {
				var ks string
				require.NoError(t, json.Unmarshal(op[1], &ks))
				key = b.KeyNamed(ks)
			}
			var val history.ValueID
			var vi int64
			if json.Unmarshal(op[2], &vi) == nil {
				val = b.ValueID(key, vi)
			} else {
				var vs string
				require.NoError(t, json.Unmarshal(op[2], &vs))
				val = b.ValueNamed(key, vs)
			}
			if kind == "w" {
				b.WriteID(txn, key, val)
			} else {
				b.ReadID(txn, key, val)
			}
		}
	}
	b.SetInit(history.InitImplicit, -1)
	b.InitAllKeys(0)
	return b.Finish()
}

// randomLines writes n transaction lines of reads and writes, keys and
// values mostly integers (some large, some negative), a few strings, so
// that lines take both the grouped and the one-by-one path.
func randomLines(rng *rand.Rand, n, ops int) []byte {
	var buf bytes.Buffer
	scalar := func(domain int) string {
		switch r := rng.IntN(30); {
		case r == 0:
			return fmt.Sprintf("%q", []string{"a", "b", "k\u00e9"}[rng.IntN(3)])
		case r == 1:
			return fmt.Sprint(rng.Int64() >> rng.IntN(64))
		case r == 2:
			return fmt.Sprint(-rng.Int64N(1000))
		}
		return fmt.Sprint(1 + rng.IntN(domain))
	}
	for i := range n {
		fmt.Fprintf(&buf, `{"session":%d,"id":%d,"ops":[`, rng.IntN(5), i+1)
		for j := range rng.IntN(ops + 1) {
			if j > 0 {
				buf.WriteByte(',')
			}
			fmt.Fprintf(&buf, `[%q, %s,%s]`, []string{"r", "w"}[rng.IntN(2)], scalar(30), scalar(60))
		}
		buf.WriteString("]}\n")
	}
	return buf.Bytes()
}

// same requires identical histories, saying briefly how they differ
// (require.Equal's dump of a large history takes minutes).
func same(t *testing.T, want, got *history.History, format string, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		d := diff(want, got)
		if d == "" {
			d = "same raw contents, different interning or metadata"
		}
		t.Fatalf("%s: %s", fmt.Sprintf(format, args...), d)
	}
}

// splitReader returns its data in two reads, split at cut.
type splitReader struct {
	data []byte
	cut  int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if r.cut > 0 {
		n = r.cut
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	r.cut -= n
	return n, nil
}

// TestReaderMatchesReference: on random histories the reader, sequential
// and parallel (in chunks and values interned in parallel in batches of
// several sizes), gives the history a plain encoding/json reading gives;
// for small ones, whatever byte the input's first read ends at.
func TestReaderMatchesReference(t *testing.T) {
	defer func(n, c int) { forceSequential, parallelBatch, chunkSize = false, n, c }(parallelBatch, chunkSize)
	rng := rand.New(rand.NewPCG(8, 9))
	for round := range 300 {
		// Pipelined, values are interned in parallel in batches of this
		// size (history.Builder.SetParallel).
		parallelBatch = []int{1, 7, 100, history.ParallelBatch}[round%4]
		// Chunks of the parallel reader: a byte, a few lines, the default.
		chunkSize = []int{1, 300, 4096, 1 << 19}[round%4]
		n, ops := 1+rng.IntN(6), 25
		cutAll := round%20 != 0 && round < 40
		switch {
		case round%20 == 0:
			n = 1500 + rng.IntN(500) // chunks and batches meet mid-history
		case cutAll:
			n, ops = 1+rng.IntN(3), 6 // small enough to cut everywhere
		}
		data := randomLines(rng, n, ops)
		want := referenceParse(t, data)
		for _, seq := range []bool{false, true} {
			forceSequential = seq
			got, err := Parse(bytes.NewReader(data), "x.jsonl", Options{})
			require.NoError(t, err)
			same(t, want, got, "round %d sequential %v", round, seq)
			if !cutAll {
				continue
			}
			for cut := 1; cut < len(data); cut++ {
				got, err := Parse(&splitReader{data, cut}, "x.jsonl", Options{})
				require.NoError(t, err)
				same(t, want, got, "round %d sequential %v cut %d", round, seq, cut)
			}
		}
	}
}
