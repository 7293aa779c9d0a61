package jsonl

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/stretchr/testify/require"
)

// sameAsScanner requires that when fastTxnLine reads line, the general
// scanner reads it too, as a plain transaction line with the same fields
// and operations.
func sameAsScanner(t *testing.T, line []byte) bool {
	t.Helper()
	var rec lineRec
	ops := []history.RawOp{{Key: -7}} // what was there must stay
	if !fastTxnLine(line, &rec, &ops) {
		require.Len(t, ops, 1, "%q", line)
		return false
	}
	ls := lineScanner{}
	ls.sc.reset(line)
	require.True(t, ls.object(), "%q: fast read it, the scanner says %v", line, ls.sc.err)
	f := &ls.f
	require.Zero(t, f.has&^txnFields, "%q", line)
	require.NotZero(t, f.has&fSession, "%q", line)
	require.NotZero(t, f.has&fOps, "%q", line)
	require.Equal(t, f.session, rec.session, "%q", line)
	require.Equal(t, f.has&fID != 0, rec.hasID, "%q", line)
	if rec.hasID {
		require.Equal(t, f.id, rec.id, "%q", line)
	}
	require.Equal(t, f.status, rec.status, "%q", line)
	require.Equal(t, f.level, rec.level, "%q", line)
	require.Equal(t, f.has&fTime != 0, rec.hasTime, "%q", line)
	if rec.hasTime {
		require.Equal(t, f.time, []int64{rec.t0, rec.t1}, "%q", line)
	}
	require.True(t, rec.fast)
	require.Equal(t, 1, rec.opLo)
	require.Equal(t, len(ops), rec.opHi)
	require.Len(t, f.ops, len(ops)-1, "%q", line)
	for i, op := range f.ops {
		require.Zero(t, op.kname|op.vname, "%q", line)
		require.Equal(t, history.SrcPlain, op.src, "%q", line)
		require.Equal(t, history.RawOp{Kind: op.kind, Key: op.key, Value: op.val}, ops[i+1], "%q", line)
	}
	return true
}

// fastLines are lines of the compact form and near misses.
var fastLines = []string{
	`{"session":1,"id":1,"ops":[["w",1,10],["r",2,0]]}`,
	`{"session":-3,"ops":[]}`,
	`{"session":1,"id":7,"status":"aborted","level":"strict-ser","time":[3,4],"ops":[["append",1,2]]}`,
	`{"session":1,"status":"unknown","ops":[["r",999999999999999999,-999999999999999999]]}`,
	`{"session":1,"ops":[["r",9223372036854775807,0]]}`,
	`{"session":1,"ops":[["r",01,0]]}`,
	`{"session":1,"ops":[["r",1,0.5]]}`,
	`{"session":1,"ops":[["r",1,1e3]]}`,
	`{"session":1,"ops":[["r",1,null]]}`,
	`{"session":1,"ops":[["r",1,[1]]]}`,
	`{"session":1,"level":"mixed","ops":[]}`,
	`{"session":1,"status":"comm\u0069tted","ops":[]}`,
	`{"session":1,"time":[4,3],"ops":[]}`,
	`{"session":1,"ops":[["r",1,0]],"id":2}`,
	`{"session":1, "ops":[]}`,
	"{\"session\":1,\"ops\":[]}\r\n",
	`{"session":1,"ops":[["w","k",1]]}`,
	`{"session":1,"ops":[["delete",1]]}`,
	`{"session":-0,"id":-0,"ops":[["r",-0,0]]}`,
}

// TestFastLineMatchesScanner: on the lines above and on many random
// mutations of them, whatever the fast reader accepts the scanner reads
// the same; and it does accept the compact form.
func TestFastLineMatchesScanner(t *testing.T) {
	accepted := 0
	for _, l := range fastLines {
		if sameAsScanner(t, []byte(l)) {
			accepted++
		}
	}
	require.GreaterOrEqual(t, accepted, 6)
	rng := rand.New(rand.NewPCG(5, 6))
	const alphabet = `0123456789-,[]{}":rwapendsiolvtu .e`
	for range 20000 {
		b := []byte(fastLines[rng.IntN(len(fastLines))])
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b) + 1)
			c := alphabet[rng.IntN(len(alphabet))]
			switch rng.IntN(3) {
			case 0:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 1:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				if i < len(b) {
					b[i] = c
				}
			}
		}
		sameAsScanner(t, b)
	}
}

// FuzzFastLine: whatever the fast line reader accepts, the general
// scanner reads the same.
func FuzzFastLine(f *testing.F) {
	for _, l := range fastLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.Count(line, "\n") > 1 {
			return
		}
		sameAsScanner(t, []byte(line))
	})
}
