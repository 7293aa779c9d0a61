package oracle

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// mixedGen is DefaultGenOptions cut to five transactions, where the mixed
// search stays fast.
func mixedGen() GenOptions {
	o := DupGenOptions()
	o.MinTxns, o.Txns = 3, 5
	return o
}

// On a history whose transactions all have one level, MixIso's axioms
// (Mixed) agree with the commit-order definitions of the other oracle
// (Biswas and Enea for RA and CC; the serial order and snapshots for SER
// and SI): two independent brute-force definitions of each level.
func TestMixedAgreesOnUniformHistories(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 600
	}
	rng := rand.New(rand.NewPCG(5, 8))
	counts := map[string]int{}
	for i := range n {
		h := Generate(rng, mixedGen())
		for _, l := range []history.Level{history.RC, history.RA, history.CC, history.SI, history.SER} {
			want, err := Check(h, l)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Mixed(h, l)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("history %d at %s: MixIso says %v, the commit-order oracle %v\n%s", i, l, got, want, Format(h))
			}
			counts[fmt.Sprintf("%s=%v", l, got)]++
		}
	}
	t.Logf("%v", counts)
	for _, l := range []string{"rc", "ra", "cc", "si", "ser"} {
		if counts[l+"=true"] == 0 || counts[l+"=false"] == 0 {
			t.Fatalf("%s: the generator gave only one verdict: %v", l, counts)
		}
	}
}

// The hierarchy of Theorem 3.4 on random histories: a history consistent
// at a level is consistent at every level it implies, PC and PSI included.
func TestMixedHierarchy(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(9, 2))
	levels := []history.Level{history.RC, history.RA, history.CC, history.PC, history.PSI, history.SI, history.SER}
	seen := map[string]bool{}
	for i := range n {
		h := Generate(rng, mixedGen())
		ok := map[history.Level]bool{}
		for _, l := range levels {
			v, err := Mixed(h, l)
			if err != nil {
				t.Fatal(err)
			}
			ok[l] = v
		}
		for _, l := range levels {
			for _, w := range levels {
				if l.AtLeast(w) && ok[l] && !ok[w] {
					t.Fatalf("history %d: consistent at %s but not at %s\n%s", i, l, w, Format(h))
				}
			}
		}
		seen[fmt.Sprintf("pc=%v psi=%v", ok[history.PC], ok[history.PSI])] = true
	}
	// PC and PSI are incomparable: random histories separate them both ways.
	if !seen["pc=true psi=false"] || !seen["pc=false psi=true"] {
		t.Logf("PC/PSI combinations seen: %v", seen)
	}
}

func parse(t *testing.T, lines ...string) *history.History {
	t.Helper()
	h, err := jsonl.Parse(strings.NewReader(strings.Join(lines, "\n")), "mixed", jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The anomalies that tell PC and PSI apart, and a mix: the long fork is
// allowed by PSI but not PC, the lost update by PC but not PSI; a lost
// update between an RA and a PSI transaction is allowed, since only the
// PSI one must see the other.
func TestMixedSeparatesLevels(t *testing.T) {
	longFork := parse(t,
		`{"session":1,"id":1,"ops":[["w",1,1]]}`,
		`{"session":2,"id":2,"ops":[["w",2,1]]}`,
		`{"session":3,"id":3,"ops":[["r",1,1],["r",2,0]]}`,
		`{"session":4,"id":4,"ops":[["r",1,0],["r",2,1]]}`)
	lostUpdate := parse(t,
		`{"session":1,"id":1,"ops":[["r",1,0],["w",1,1]]}`,
		`{"session":2,"id":2,"ops":[["r",1,0],["w",1,2]]}`)
	for _, c := range []struct {
		name  string
		h     *history.History
		level history.Level
		want  bool
	}{
		{"long fork", longFork, history.PSI, true},
		{"long fork", longFork, history.PC, false},
		{"long fork", longFork, history.CC, true},
		{"long fork", longFork, history.SI, false},
		{"lost update", lostUpdate, history.PC, true},
		{"lost update", lostUpdate, history.PSI, false},
		{"lost update", lostUpdate, history.SI, false},
		{"lost update", lostUpdate, history.CC, true},
	} {
		got, err := Mixed(c.h, c.level)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s at %s: got %v, want %v", c.name, c.level, got, c.want)
		}
	}
	// A mix: the RA transaction need not see the PSI one, so arbitrating
	// the PSI one first explains both reads of 0.
	lostUpdate.Txns[1].Level, lostUpdate.Txns[2].Level = history.RA, history.PSI
	if ok, err := Mixed(lostUpdate, history.SER); err != nil || !ok {
		t.Errorf("lost update between RA and PSI: got %v, %v; want consistent", ok, err)
	}
	lostUpdate.Txns[1].Level = history.SI
	if ok, err := Mixed(lostUpdate, history.SER); err != nil || ok {
		t.Errorf("lost update between SI and PSI: got %v, %v; want inconsistent", ok, err)
	}
	// RC (hyperiso's extension), like RA, need not see the PSI one.
	lostUpdate.Txns[1].Level = history.RC
	if ok, err := Mixed(lostUpdate, history.SER); err != nil || !ok {
		t.Errorf("lost update between RC and PSI: got %v, %v; want consistent", ok, err)
	}
	lostUpdate.Txns[1].Level = history.StrictSER
	if _, err := Mixed(lostUpdate, history.SER); err == nil {
		t.Error("strict SER is outside MixIso and must be refused")
	}
}
