package check_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
)

// The examples of docs/predicates.md, as JSONL, at
// every level the checker decides them: the verdicts are the table's
// (which internal/execoracle's tests assert of the oracle). "all" is the
// range [0,10).
func TestPredicateExamples(t *testing.T) {
	levels := []history.Level{history.RC, history.RA, history.CC, history.RR, history.PC, history.PSI, history.SI, history.SER, history.StrictSER}
	for _, c := range []struct {
		name string
		src  string
		want string // RC RA CC RR PC PSI SI SER strict-ser; '-' refused
	}{
		{"phantom", `{"session":1,"ops":[["select",{"keys":[0,10]},[]],["select",{"keys":[0,10]},[[5,1]]]]}
{"session":2,"ops":[["insert",5,1]]}`, "✓✗✗✓✗✗✗✗✗"},
		{"phantom after a point read", `{"session":1,"ops":[["r",5,1],["select",{"keys":[0,10]},[]]]}
{"session":2,"ops":[["insert",5,1]]}`, "✗✗✗✗✗✗✗✗✗"},
		{"phantom, then a point read", `{"session":1,"ops":[["select",{"keys":[0,10]},[]],["r",5,1]]}
{"session":2,"ops":[["insert",5,1]]}`, "✓✗✗✓✗✗✗✗✗"},
		{"G2 through predicates", `{"session":1,"ops":[["select",{"keys":[0,10]},[]],["insert",1,1]]}
{"session":2,"ops":[["select",{"keys":[0,10]},[]],["insert",2,1]]}`, "✓✓✓✓✓✓✓✗✗"},
		{"G2-item through absent rows", `{"session":1,"ops":[["r",1,null],["r",2,null],["insert",1,1]]}
{"session":2,"ops":[["r",1,null],["r",2,null],["insert",2,1]]}`, "✓✓✓✗✓✓✓✗✗"},
		{"G2, one item and one predicate anti-dependency", `{"session":1,"ops":[["r",1,null],["insert",2,1]]}
{"session":2,"ops":[["select",{"keys":[2,3]},[]],["insert",1,1]]}`, "✓✓✓✓✓✓✓✗✗"},
		{"fractured predicate read", `{"session":1,"ops":[["insert",1,1],["insert",2,1]]}
{"session":2,"ops":[["select",{"keys":[0,10]},[[1,1]]]]}`, "✓✗✗✓✗✗✗✗✗"},
		// At rc a scan's rows are not ordered: row 1 seen after T2's
		// update and row 2 before it fits no order of the two rows. At rr
		// both returned rows are item reads, latest before the reader.
		{"scan sees a later row older", `{"session":1,"ops":[["insert",1,10],["insert",2,20]]}
{"session":1,"ops":[["w",1,11],["w",2,21]]}
{"session":2,"ops":[["select",{"keys":[0,10]},[[1,11],[2,20]]]]}`, "✓✗✗✗✗✗✗✗✗"},
		{"read of an absent row", `{"session":1,"ops":[["insert",1,1],["delete",1]]}
{"session":2,"ops":[["r",1,null]]}`, "✓✓✓✓✓✓✓✓✓"},
		{"read after a delete in session", `{"session":1,"ops":[["insert",1,1]]}
{"session":1,"ops":[["delete",1]]}
{"session":1,"ops":[["r",1,1]]}`, "✓✗✗✗✗✗✗✗✗"},
		{"insert after delete", `{"session":1,"ops":[["insert",1,7]]}
{"session":1,"ops":[["delete",1]]}
{"session":1,"ops":[["insert",1,7]]}
{"session":2,"ops":[["r",1,7]]}
{"session":2,"ops":[["r",1,null]]}
{"session":2,"ops":[["r",1,7]]}`, "✓✓✓✓✓✓✓✓✓"},
		{"resurrection", `{"session":1,"ops":[["insert",1,7]]}
{"session":1,"ops":[["delete",1]]}
{"session":2,"ops":[["r",1,7]]}
{"session":2,"ops":[["r",1,null]]}
{"session":2,"ops":[["r",1,7]]}`, "✓✓✗✗✗✗✗✗✗"},
		{"own writes", `{"session":1,"ops":[["insert",1,1],["insert",2,2]]}
{"session":1,"ops":[["delete",1],["insert",3,3],["select",{"keys":[0,10]},[[2,2],[3,3]]]]}`, "✓✓✓✓✓✓✓✓✓"},
		{"own insert missed", `{"session":1,"ops":[["insert",5,1],["select",{"keys":[0,10]},[]]]}`, "✗✗✗✗✗✗✗✗✗"},
		// The examples with value tests. Hermitage's G2: each transaction's
		// predicate misses the other's insert, and the initial rows are
		// rows it did not return for their values.
		{"G2 with a value predicate", `{"session":1,"ops":[["insert",1,10],["insert",2,20]]}
{"session":2,"ops":[["select",{"keys":[0,10],"in":[30,42]},[]],["insert",3,30]]}
{"session":3,"ops":[["select",{"keys":[0,10],"in":[30,42]},[]],["insert",4,42]]}`, "✓✓✓✓✓✓✓✗✗"},
		// The same with a range of values, and T1 ordered first by its
		// session: T2 and T3 both saw it.
		{"G2 with a value range", `{"session":1,"ops":[["insert",1,10],["insert",2,20]]}
{"session":1,"ops":[["select",{"keys":[0,10],"values":[25,50]},[]],["insert",3,30]]}
{"session":2,"ops":[["r",1,10],["select",{"keys":[0,10],"values":[25,50]},[]],["insert",4,42]]}`, "✓✓✓✓✓✓✓✗✗"},
		{"G2 prevented", `{"session":1,"ops":[["insert",1,10],["insert",2,20]]}
{"session":1,"ops":[["select",{"keys":[0,10],"in":[30,42]},[]],["insert",3,30]]}
{"session":1,"ops":[["select",{"keys":[0,10],"in":[30,42]},[[3,30]]],["insert",4,42]]}`, "✓✓✓✓✓✓✓✓✓"},
		{"update moves a row between predicates", `{"session":1,"ops":[["insert",1,10]]}
{"session":1,"ops":[["select",{"keys":[0,10],"in":[10]},[[1,10]]],["select",{"keys":[0,10],"in":[20]},[[1,20]]]]}
{"session":2,"ops":[["w",1,20]]}`, "✓✗✗✗✗✗✗✗✗"},
		{"PMP", `{"session":1,"ops":[["insert",1,10],["insert",2,20]]}
{"session":1,"ops":[["select",{"keys":[0,10],"in":[30]},[]],["select",{"keys":[0,10]},[[1,10],[2,20],[3,30]]]]}
{"session":2,"ops":[["insert",3,30]]}`, "✓✗✗✓✗✗✗✗✗"},
		{"PMP prevented", `{"session":1,"ops":[["insert",1,10],["insert",2,20]]}
{"session":1,"ops":[["select",{"keys":[0,10],"in":[30]},[]],["select",{"keys":[0,10]},[[1,10],[2,20]]]]}
{"session":2,"ops":[["insert",3,30]]}`, "✓✓✓✓✓✓✓✓✓"},
		{"PMP for write predicates", `{"session":2,"ops":[["insert",1,10],["insert",2,20]]}
{"session":2,"ops":[["r",1,10],["select",{"keys":[0,10],"in":[20]},[]]]}
{"session":1,"ops":[["select",{"keys":[0,10]},[[1,10],[2,20]]],["w",1,20],["w",2,30]]}`, "✓✗✗✗✗✗✗✗✗"},
		// A row not returned for its value, then read with that value: one
		// version, no anomaly; read with a value the test accepts: a
		// phantom (rc and rr allow it).
		{"row rejected, then read", `{"session":1,"ops":[["insert",1,10]]}
{"session":2,"ops":[["select",{"keys":[0,10],"in":[20]},[]],["r",1,10]]}`, "✓✓✓✓✓✓✓✓✓"},
		{"row rejected, then read matching", `{"session":1,"ops":[["insert",1,10]]}
{"session":1,"ops":[["w",1,20]]}
{"session":2,"ops":[["select",{"keys":[0,10],"in":[20]},[]],["r",1,20]]}`, "✓✗✗✓✗✗✗✗✗"},
		// The row not returned may have been 10 or 30; the point read
		// says 10, the read of row 2 that T2 saw T1: fractured from RA
		// up (the first read takes the candidates of both, NarrowReads).
		{"row rejected, then read older", `{"session":1,"ops":[["insert",1,10]]}
{"session":1,"ops":[["w",1,30],["w",2,5]]}
{"session":2,"ops":[["select",{"keys":[0,10],"in":[20]},[]],["r",1,10],["r",2,5]]}`, "✓✗✗✗✗✗✗✗✗"},
		// Own write rejected by the test: not returned, as it should be.
		{"own write rejected", `{"session":1,"ops":[["insert",5,1],["select",{"keys":[0,10],"values":[2,9]},[]]]}`, "✓✓✓✓✓✓✓✓✓"},
		{"own write accepted, missed", `{"session":1,"ops":[["insert",5,3],["select",{"keys":[0,10],"values":[2,9]},[]]]}`, "✗✗✗✗✗✗✗✗✗"},
	} {
		want := []rune(c.want)
		for i, l := range levels {
			src := c.src
			if l == history.StrictSER {
				// Real time that orders nothing the sessions do not.
				src = strings.ReplaceAll(src, `"ops"`, `"time":[0,100],"ops"`)
			}
			h, err := formats.ReadStream(strings.NewReader(src+"\n"), "ex.jsonl", formats.Options{})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			res, err := check.Check(context.Background(), h, l, check.Options{})
			got := '-'
			switch {
			case errors.Is(err, check.ErrInput):
			case err != nil:
				t.Fatalf("%s at %v: %v", c.name, l, err)
			case res.Verdict == check.Satisfied:
				got = '✓'
			case res.Verdict == check.Violated:
				got = '✗'
			default:
				got = '?'
			}
			if got != want[i] {
				t.Errorf("%s at %v: %c, want %c (%v)", c.name, l, got, want[i], err)
			}
		}
	}
}

// A violation of RR in the item reads, beside a phantom that RR allows
// (so SER, tried first, fails too): RR is refuted on the item part alone
// (strong plan refuteItems), not by the search over every model.
func TestRRRefutedByItems(t *testing.T) {
	src := `{"session":1,"ops":[["r",1,null],["r",2,null],["insert",1,1]]}
{"session":2,"ops":[["r",1,null],["r",2,null],["insert",2,1]]}
{"session":3,"ops":[["select",{"keys":[0,10]},[]],["select",{"keys":[0,10]},[[5,1]]]]}
{"session":4,"ops":[["insert",5,1]]}
`
	h, err := formats.ReadStream(strings.NewReader(src), "rr.jsonl", formats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(context.Background(), h, history.RR, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.Violated || res.Counters["items_refuted"] != 1 {
		t.Fatalf("verdict %v, counters %v: want violated by items_refuted", res.Verdict, res.Counters)
	}
	// Without the G2-item the phantom alone satisfies RR.
	h, err = formats.ReadStream(strings.NewReader(strings.Join(strings.SplitAfter(src, "\n")[2:], "")), "rr.jsonl", formats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err = check.Check(context.Background(), h, history.RR, check.Options{}); err != nil || res.Verdict != check.Satisfied {
		t.Fatalf("phantom alone: %v, %v", res.Verdict, err)
	}
}
