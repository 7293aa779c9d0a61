package check_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/execoracle"
)

// TestPredicateOracle compares the checker with execoracle on random
// histories of rows: inserts, updates, deletes, point reads that find a
// row absent, and predicate reads over key ranges, with and without value
// tests, with
// repeated values and unknown outcomes. They go through JSONL as a user's
// do. The verdicts must agree, none may be unknown, and a satisfied
// verdict's witness must replay. HYPERISO_PRED_N sets how many are
// compared per level.
func TestPredicateOracle(t *testing.T) {
	n := 400
	if v, err := strconv.Atoi(os.Getenv("HYPERISO_PRED_N")); err == nil && v > 0 {
		n = v
	}
	levels := []execoracle.Level{execoracle.SER, execoracle.StrictSER, execoracle.SI, execoracle.PSI,
		execoracle.PC, execoracle.CC, execoracle.RA, execoracle.Mixed, execoracle.RC, execoracle.RR}
	// The second profile has more transactions and rows, two values (so
	// they repeat often) and more unknown outcomes.
	// The value profiles give predicate reads value tests too ("in",
	// "values"), so a row not returned may have had a rejected value.
	dense := func(o *execoracle.GenOptions) {
		o.MaxTxns, o.RowKeys, o.RowValues, o.PUnknown, o.MaxOps = 6, 4, 2, 0.3, 5
	}
	ranges := func(o *execoracle.GenOptions) { o.KeyRangesOnly = true }
	profiles := []struct {
		name string
		tune func(*execoracle.GenOptions)
	}{
		{"plain", ranges},
		{"dense", func(o *execoracle.GenOptions) { ranges(o); dense(o) }},
		{"values", func(*execoracle.GenOptions) {}},
		{"dense-values", dense},
	}
	for pi, prof := range profiles {
		for li, l := range levels {
			predOracle(t, prof.name, prof.tune, l, int64(2900+100*pi+li), n)
		}
	}
}

func predOracle(t *testing.T, prof string, tune func(*execoracle.GenOptions), l execoracle.Level, seed int64, n int) {
	t.Run(prof+"/"+l.String(), func(t *testing.T) {
		rng := rand.New(rand.NewSource(seed))
		var fails []listFailure
		counts := map[string]int{}
		for tries := 0; len(fails) < 1000 && counts["checked"] < n && tries < 50*n; tries++ {
			o := execoracle.PredicateGenOptions(l)
			tune(&o)
			h := execoracle.Generate(rng, o)
			f, skip := listCompare(t, h, l)
			if strings.Contains(skip, "nothing to check") {
				counts["refused: nothing committed"]++
				continue
			}
			if strings.Contains(skip, "needs real-time order") {
				counts["refused: no real time"]++
				continue
			}
			if skip != "" {
				t.Fatalf("refused a history it should decide: %s\n%s", skip, h.JSONL())
			}
			counts["checked"]++
			if sat, _ := execoracle.Satisfies(h, l, execoracle.SER); sat {
				counts["oracle satisfied"]++
			}
			if hasSelect(h) {
				counts["with predicate reads"]++
			}
			if rcSelect(h, l) {
				counts["with an rc predicate read"]++
			}
			if f != nil {
				counts[f.kind]++
				fails = append(fails, *f)
			}
		}
		t.Logf("%s/%v: %v", prof, l, counts)
		if counts["checked"] < n {
			t.Errorf("%v: only %d compared", l, counts["checked"])
		}
		reportFailures(t, prof, l, fails, counts["checked"])
	})
}

func hasSelect(h *execoracle.History) bool {
	for _, tx := range h.Txns {
		for _, op := range tx.Ops {
			if op.Kind == execoracle.PredRead {
				return true
			}
		}
	}
	return false
}

// rcSelect reports whether a transaction of h that is not aborted runs at
// rc (checked at l, with SER the default of a mixed check) and has a
// predicate read: the rows that rc does not order among themselves.
func rcSelect(h *execoracle.History, l execoracle.Level) bool {
	for _, tx := range h.Txns {
		at := l
		if l == execoracle.Mixed {
			at = tx.Level
			if at == execoracle.LevelNone || at == execoracle.Mixed {
				at = execoracle.SER
			}
		}
		if at != execoracle.RC || tx.Status == execoracle.Aborted {
			continue
		}
		for _, op := range tx.Ops {
			if op.Kind == execoracle.PredRead {
				return true
			}
		}
	}
	return false
}

// The refusal (rows beside lists), and a predicate read decided at rc and
// in a mixed check's rc transaction.
func TestPredicateRefusals(t *testing.T) {
	read := func(s string) *history.History {
		h, err := formats.ReadStream(bytes.NewReader([]byte(s)), "p.jsonl", formats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	sel := `{"session":1,"ops":[["insert",1,1]]}
{"session":2,"level":"rc","ops":[["select",{"keys":[0,10]},[[1,1]]]]}
`
	for _, c := range []struct {
		src   string
		level history.Level
		want  string
	}{
		{sel + `{"session":3,"ops":[["append",20,1]]}` + "\n", history.SER, "not decided yet: inserts, deletes or predicate reads beside list appends"},
	} {
		_, err := check.Check(context.Background(), read(c.src), c.level, check.Options{DefaultLevel: history.SER})
		if !errors.Is(err, check.ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.level, err, c.want)
		}
	}
	for _, l := range []history.Level{history.RC, history.Mixed, history.RA, history.SER} {
		res, err := check.Check(context.Background(), read(sel), l, check.Options{DefaultLevel: history.SER})
		if err != nil || res.Verdict != check.Satisfied {
			t.Errorf("%v: %v %v", l, res.Verdict, err)
		}
	}
}

// A cycle through predicate reads is named G2 with the phantom said in
// words on each edge; the same shape through point reads is G2-item.
func TestPredicateNaming(t *testing.T) {
	check1 := func(src string, l history.Level) *check.Result {
		h, err := formats.ReadStream(strings.NewReader(src), "n.jsonl", formats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := check.Check(context.Background(), h, l, check.Options{})
		if err != nil || res.Verdict != check.Violated || len(res.Anomalies) == 0 {
			t.Fatalf("%v: %v %v", l, res.Verdict, err)
		}
		return res
	}
	g2 := check1(`{"session":1,"ops":[["select",{"keys":[0,10]},[]],["insert",1,1]]}
{"session":2,"ops":[["select",{"keys":[0,10]},[]],["insert",2,1]]}
`, history.SER)
	a := g2.Anomalies[0]
	if a.Type != history.G2 || !strings.Contains(a.Description, "a cycle with 2 rw edges, 2 of them from a row that a predicate read did not return") {
		t.Errorf("write skew through predicates: %s: %s", a.Type, a.Description)
	}
	for _, e := range a.Edges {
		if !strings.Contains(e.Reason, "predicate read of keys [0,10) did not return: it saw the row absent") {
			t.Errorf("edge: %s", e.Reason)
		}
	}
	item := check1(`{"session":1,"ops":[["r",1,null],["r",2,null],["insert",1,1]]}
{"session":2,"ops":[["r",1,null],["r",2,null],["insert",2,1]]}
`, history.SER)
	if a := item.Anomalies[0]; a.Type != history.G2Item || strings.Contains(a.Description, "predicate") {
		t.Errorf("write skew through point reads: %s: %s", a.Type, a.Description)
	}
	ph := check1(`{"session":1,"ops":[["w",7,1],["select",{"keys":[0,10]},[[7,1]]],["select",{"keys":[0,10]},[[5,1],[7,1]]]]}
{"session":2,"ops":[["insert",5,1]]}
`, history.RA)
	if a := ph.Anomalies[0]; a.Type != history.Phantom || !strings.Contains(a.Description, "op 2, a predicate read of keys [0,10), read row 5 = 1, but it had read nil before without writing the key: a phantom") {
		t.Errorf("phantom: %s: %s", a.Type, a.Description)
	}
}

// TestPredicateClasses: the classes phantom, PMP and G2 on minimal
// histories, at every level, as read findings (a row read twice) and as
// cycles: violated where the class table says, under the class's name at
// the levels that name it, satisfied at the others (docs/predicates.md).
func TestPredicateClasses(t *testing.T) {
	levels := []history.Level{history.RC, history.RA, history.CC, history.RR, history.PC, history.PSI, history.SI, history.SER}
	for _, c := range []struct {
		name, class, src string
		// want per level: "" satisfied, the class name, or "*" violated
		// under another name (the weak engine's fractured read).
		want []string
	}{
		{"G2, write skew through predicates", history.G2, `{"session":1,"ops":[["select",{"keys":[0,10]},[]],["insert",1,1]]}
{"session":2,"ops":[["select",{"keys":[0,10]},[]],["insert",2,1]]}`,
			[]string{"", "", "", "", "", "", "", "G2"}},
		{"G2, one item and one predicate anti-dependency", history.G2, `{"session":1,"ops":[["r",1,null],["insert",2,1]]}
{"session":2,"ops":[["select",{"keys":[2,3]},[]],["insert",1,1]]}`,
			[]string{"", "", "", "", "", "", "", "G2"}},
		{"phantom, one range read twice", history.Phantom, `{"session":1,"ops":[["select",{"keys":[0,10]},[]],["select",{"keys":[0,10]},[[5,1]]]]}
{"session":2,"ops":[["insert",5,1]]}`,
			[]string{"", "phantom", "phantom", "", "phantom", "phantom", "phantom", "phantom"}},
		{"phantom, a range then a point read", history.Phantom, `{"session":1,"ops":[["select",{"keys":[0,10]},[]],["r",5,1]]}
{"session":2,"ops":[["insert",5,1]]}`,
			[]string{"", "phantom", "phantom", "", "phantom", "phantom", "phantom", "phantom"}},
		{"phantom, a cycle", history.Phantom, `{"session":1,"ops":[["select",{"keys":[0,5]},[]],["r",7,1]]}
{"session":2,"ops":[["insert",3,1],["w",7,1]]}`,
			[]string{"", "*", "*", "", "phantom", "phantom", "phantom", "phantom"}},
		{"phantom after a point read (rc: reads never go back)", history.Phantom, `{"session":1,"ops":[["r",5,1],["select",{"keys":[0,10]},[]]]}
{"session":2,"ops":[["insert",5,1]]}`,
			[]string{"*", "phantom", "phantom", "phantom", "phantom", "phantom", "phantom", "phantom"}},
		{"PMP, a row read by two ranges", history.PMP, `{"session":1,"ops":[["select",{"keys":[0,5]},[]],["select",{"keys":[0,10]},[[3,1]]]]}
{"session":2,"ops":[["insert",3,1]]}`,
			[]string{"", "PMP", "PMP", "", "PMP", "PMP", "PMP", "PMP"}},
		{"PMP, a cycle", history.PMP, `{"session":1,"ops":[["select",{"keys":[0,5]},[]],["select",{"keys":[5,10]},[[7,1]]]]}
{"session":2,"ops":[["insert",3,1],["insert",7,1]]}`,
			[]string{"", "*", "*", "", "PMP", "PMP", "PMP", "PMP"}},
	} {
		cl, ok := history.ClassOf(c.class)
		if !ok {
			t.Fatalf("no class %s", c.class)
		}
		for i, l := range levels {
			h, err := formats.ReadStream(strings.NewReader(c.src+"\n"), "c.jsonl", formats.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := check.Check(context.Background(), h, l, check.Options{})
			if err != nil {
				t.Fatalf("%s at %v: %v", c.name, l, err)
			}
			want := c.want[i]
			switch {
			case want == "" && res.Verdict != check.Satisfied:
				t.Errorf("%s at %v: %s, want satisfied (%v)", c.name, l, res.Verdict, res.Anomalies)
			case want != "" && res.Verdict != check.Violated:
				t.Errorf("%s at %v: %s, want violated", c.name, l, res.Verdict)
			case want != "" && want != "*" && res.Anomalies[0].Type != want:
				t.Errorf("%s at %v: %s (%s), want %s", c.name, l, res.Anomalies[0].Type, res.Anomalies[0].Description, want)
			}
			// The class table agrees where the class is named at all.
			if want == c.class && !cl.ForbiddenAt(l) && l != history.RR && l != history.RC {
				t.Errorf("%s at %v: named %s, which the table says %v allows", c.name, l, c.class, l)
			}
		}
	}
}

// Generated predicate histories survive convert: JSONL written from the
// history read gives it back (the same bytes when written again) and the
// same verdict.
func TestPredicateConvertRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(2999))
	for _, l := range []history.Level{history.SER, history.SI, history.RA} {
		for range 150 {
			o := execoracle.PredicateGenOptions(execoracle.SER)
			o.KeyRangesOnly = true
			text := execoracle.Generate(rng, o).JSONL()
			h, err := formats.ReadStream(bytes.NewReader(text), "g.jsonl", formats.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			if err := jsonl.Write(&a, h); err != nil {
				t.Fatal(err)
			}
			h2, err := formats.ReadStream(bytes.NewReader(a.Bytes()), "c.jsonl", formats.Options{})
			if err != nil {
				t.Fatalf("%v\n%s", err, a.String())
			}
			if err := jsonl.Write(&b, h2); err != nil || a.String() != b.String() {
				t.Fatalf("second write differs (%v):\n%s\n%s", err, a.String(), b.String())
			}
			r1, err1 := check.Check(context.Background(), h, l, check.Options{})
			r2, err2 := check.Check(context.Background(), h2, l, check.Options{})
			if (err1 == nil) != (err2 == nil) || err1 == nil && r1.Verdict != r2.Verdict {
				t.Fatalf("%v: %v %v / %v %v\n%s", l, r1.Verdict, err1, r2.Verdict, err2, text)
			}
		}
	}
}

// Without predicate reads RR is SER: on random register histories and
// row histories without predicate reads (inserts, deletes, absent reads),
// with repeated values and unknown outcomes, recorded at SI, RR or SER,
// the checker's verdicts at rr and ser agree, and both agree with the
// oracle's at rr.
func TestRRWithoutPredicatesIsSER(t *testing.T) {
	rng := rand.New(rand.NewSource(3100))
	gens := []func(execoracle.Level) execoracle.GenOptions{
		execoracle.RegisterGenOptions,
		func(l execoracle.Level) execoracle.GenOptions {
			o := execoracle.PredicateGenOptions(l)
			o.PPredRead = 0
			return o
		},
	}
	counts := map[string]int{}
	for i := range 600 {
		o := gens[i%2]([]execoracle.Level{execoracle.SI, execoracle.RR, execoracle.SER}[i%3])
		o.PDup = 0.3
		h := execoracle.Generate(rng, o)
		hh, err := formats.ReadStream(bytes.NewReader(h.JSONL()), "g.jsonl", formats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rr, err1 := check.Check(context.Background(), hh, history.RR, check.Options{})
		ser, err2 := check.Check(context.Background(), hh, history.SER, check.Options{})
		if errors.Is(err1, check.ErrInput) && errors.Is(err2, check.ErrInput) {
			counts["refused"]++
			continue
		}
		if err1 != nil || err2 != nil {
			t.Fatalf("%v / %v\n%s", err1, err2, h.JSONL())
		}
		exec, err := execoracle.Decide(h, execoracle.RR, execoracle.SER)
		if err != nil {
			t.Fatal(err)
		}
		want := check.Violated
		if exec != nil {
			want = check.Satisfied
		}
		if rr.Verdict != ser.Verdict || rr.Verdict != want {
			t.Fatalf("rr %s, ser %s, oracle at rr %s\n%s", rr.Verdict, ser.Verdict, want, h.JSONL())
		}
		counts[want.String()]++
	}
	t.Log(counts)
	if counts["satisfied"] < 100 || counts["violated"] < 100 {
		t.Errorf("too one-sided: %v", counts)
	}
}
