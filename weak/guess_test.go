package weak

import (
	"context"
	"fmt"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

// TestProbeReadsOneSnapshot: at CC the first guess reads a transaction's
// repeated values at one point of the order. R read b's initial value, so
// it saw nothing of T2, and a = 1, which T1 and T2's session successor T3
// wrote: reading a from T3 would make R see T2 (causal), which its read of
// b denies, so the guess must be T1's, and then it decides alone.
func TestProbeReadsOneSnapshot(t *testing.T) {
	b := history.NewBuilder("test", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	id := int64(0)
	begin := func(session int64) history.TxnID {
		id++
		return b.Begin(b.Session(session), id, history.Committed, history.Pos{})
	}
	for round := range 3 {
		a, k := int64(2*round+1), int64(2*round+2)
		t1 := begin(1)
		b.Write(t1, a, 1)
		t2 := begin(2)
		b.Write(t2, k, 5)
		t3 := begin(2)
		b.Write(t3, a, 1)
		r := begin(3)
		b.Read(r, a, 1)
		b.Read(r, k, 0)
	}
	h := b.Finish()
	res, err := Check(context.Background(), h, history.CC, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != verdict.Satisfied || res.Counters["choice_probe"] != 1 {
		t.Fatalf("verdict %s, choice_probe %d (%s)", res.Verdict, res.Counters["choice_probe"], fmt.Sprint(res.Counters))
	}
}
