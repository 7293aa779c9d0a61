package cobra

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// randomLogs writes a few logs of about txns transactions over a few keys
// and value hashes, so that triples repeat: writes in both flavours and
// mixed, reads of earlier writes (in generation order, so often of later
// ones in scan order), of nothing, of the initial state with agreeing
// and conflicting values, by the garbage collector, of their own
// transaction; sometimes open transactions, empty logs, repeated write
// or transaction ids and records that break the structure.
func randomLogs(rng *rand.Rand, txns int) map[string][]byte {
	nfiles := 1 + rng.IntN(4)
	keys, hashes := int64(1+rng.IntN(6)), int64(1+rng.IntN(8))
	if rng.IntN(4) == 0 {
		keys, hashes = 300, 1<<40
	}
	universal := []int{0, 0, 1, 2}[rng.IntN(4)] // 0 unique, 1 universal, 2 mixed
	broken := rng.IntN(3) == 0
	type write struct{ txn, wid, key, hash int64 }
	var writes []write
	nextTxn, nextWid := int64(1), int64(1000)
	logs := map[string][]byte{}
	for f := range nfiles {
		var d []byte
		name := fmt.Sprintf("T%d.log", rng.IntN(20))
		if rng.IntN(8) == 0 {
			name = fmt.Sprintf("x%d.log", f)
		}
		n := rng.IntN(2*txns/nfiles + 1)
		for ti := range n {
			id := nextTxn
			nextTxn++
			if broken && rng.IntN(50) == 0 {
				id = []int64{1, InitID, id - 1}[rng.IntN(3)]
			}
			d = append(d, S(id)...)
			for range rng.IntN(6) {
				key := 1 + rng.Int64N(keys)
				hash := rng.Int64N(hashes)
				if rng.IntN(2) == 0 {
					wid := nextWid
					nextWid++
					if universal == 1 || universal == 2 && rng.IntN(2) == 0 {
						wid = UniversalID
					} else if rng.IntN(30) == 0 && nextWid > 1001 {
						wid = nextWid - 2 // a repeated write id
					}
					writes = append(writes, write{id, wid, key, hash})
					d = append(d, W(wid, key, hash)...)
					continue
				}
				switch r := rng.IntN(12); {
				case r < 5 && len(writes) > 0:
					w := writes[rng.IntN(len(writes))]
					if w.wid == UniversalID {
						w.txn = UniversalID
					}
					if rng.IntN(10) == 0 {
						w.key = key // the right writer, another key
					}
					d = append(d, R(w.txn, w.wid, w.key, w.hash)...)
				case r < 8:
					wt, wid := InitID, InitID
					if rng.IntN(3) == 0 {
						wt = NullID
					}
					if rng.IntN(3) == 0 {
						wid = NullID
					}
					d = append(d, R(wt, wid, key, rng.Int64N(3))...)
				case r == 8:
					// By the garbage collector, or naming INIT with another
					// write id: the key's own, in the unique flavour, gives
					// the triple of an initial read of the key.
					d = append(d, R(InitID, []int64{GCTrue, GCFalse, 77, key}[rng.IntN(4)], key, rng.Int64N(3))...)
				case r == 9:
					d = append(d, R(id, nextWid+5, key, hash)...) // its own transaction, no such write
				case r == 10:
					d = append(d, uR(key, hash)...)
				default:
					d = append(d, R(rng.Int64N(nextTxn+1), rng.Int64N(nextWid+1), key, hash)...)
				}
			}
			if ti < n-1 || rng.IntN(6) != 0 {
				d = append(d, C(id)...)
			}
		}
		if broken && len(d) > 0 {
			switch rng.IntN(6) {
			case 0:
				d = d[:rng.IntN(len(d))]
			case 1:
				d = append(d, C(7)...)
			case 2:
				d = append(d, 'A')
			case 3:
				d[rng.IntN(len(d))] ^= byte(1 + rng.IntN(255))
			case 4:
				d = append(W(1, 1, 1), d...)
			}
		}
		if _, dup := logs[name]; !dup || rng.IntN(10) == 0 {
			logs[name] = d
		}
	}
	return logs
}

func memLogs(files map[string][]byte) []Log {
	var logs []Log
	for name, d := range files {
		logs = append(logs, mem("dir/"+name, d))
	}
	return logs
}

// sameAsReference reads files with both readers in every flavour, strict
// and lenient, and requires the same history or the same error.
func sameAsReference(t *testing.T, files map[string][]byte) {
	t.Helper()
	for _, fl := range []Flavour{Auto, Unique, Universal} {
		for _, lenient := range []bool{false, true} {
			opt := Options{Flavour: fl, Lenient: lenient}
			want, wantErr := refParseLogs("dir", memLogs(files), opt)
			got, err := ParseLogs("dir", memLogs(files), opt)
			if wantErr != nil {
				require.Error(t, err, "%+v", opt)
				require.Equal(t, wantErr.Error(), err.Error(), "%+v", opt)
				require.IsType(t, wantErr, err)
				continue
			}
			require.NoError(t, err, "%+v", opt)
			sameHistory(t, want, got, "%+v", opt)
		}
	}
}

// sameHistory requires got to equal want, field by field first so that a
// difference is shown on its own.
func sameHistory(t *testing.T, want, got *history.History, msg ...any) {
	t.Helper()
	require.Equal(t, want.Warnings, got.Warnings, msg...)
	require.Equal(t, want.Keys, got.Keys, msg...)
	require.Equal(t, want.Values, got.Values, msg...)
	require.Equal(t, want.Txns[0], got.Txns[0], msg...)
	require.Equal(t, len(want.Txns), len(got.Txns), msg...)
	for i := range want.Txns {
		require.Equal(t, want.Txns[i], got.Txns[i], msg...)
	}
	require.Equal(t, want, got, msg...)
}

// TestSameAsReference: the reader, which finds the warnings after
// reading and keeps the versions of value identities in its own table,
// reads random logs, and every prefix of small ones, as the reader it
// replaced did.
func TestSameAsReference(t *testing.T) {
	defer func(n int) { maxWarningsPerKind = n }(maxWarningsPerKind)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 400 {
		maxWarningsPerKind = []int{0, 1, 3, 20}[i%4]
		files := randomLogs(rng, 1+rng.IntN(30))
		sameAsReference(t, files)
		if i%10 == 0 {
			for name, d := range files {
				if len(d) > 800 {
					continue
				}
				for cut := range len(d) {
					cutFiles := map[string][]byte{}
					for n, e := range files {
						cutFiles[n] = e
					}
					cutFiles[name] = d[:cut]
					sameAsReference(t, cutFiles)
				}
				break
			}
		}
	}
	// Large enough for the tables to grow.
	for range 3 {
		sameAsReference(t, randomLogs(rng, 40000))
	}
}
