package execoracle_test

import (
	"bytes"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/execoracle"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// The older oracle (internal/oracle) decides register histories by other
// means: commit orders for RC, RA and CC, serial and snapshot orders for SER
// and SI, and its own AR/VIS search for PC, PSI and mixes. The two must
// agree on every register history.
func TestRegistersAgreeWithOlderOracle(t *testing.T) {
	n := 400 // per level; HYPERISO_REG_N overrides
	if v, err := strconv.Atoi(os.Getenv("HYPERISO_REG_N")); err == nil && v > 0 {
		n = v
	}
	levels := []execoracle.Level{execoracle.RC, execoracle.RA, execoracle.CC, execoracle.PC,
		execoracle.PSI, execoracle.SI, execoracle.SER, execoracle.Mixed}
	rng := rand.New(rand.NewSource(5))
	for _, l := range levels {
		sat, total, differ := 0, 0, 0
		for range n {
			o := execoracle.RegisterGenOptions(l)
			o.Default = execoracle.Level(int(execoracle.RC) + rng.Intn(int(execoracle.SER-execoracle.RC)+1))
			h := execoracle.Generate(rng, o)
			hh, err := jsonl.Parse(bytes.NewReader(h.JSONL()), "gen.jsonl", jsonl.Options{})
			if err != nil {
				t.Fatalf("%v\n%s", err, h.JSONL())
			}
			def := history.Level(0)
			if l == execoracle.Mixed {
				def, _ = history.ParseLevel(o.Default.String())
			}
			got, err := execoracle.Satisfies(h, l, o.Default)
			if err != nil {
				t.Fatal(err)
			}
			var want bool
			switch l {
			case execoracle.PC, execoracle.PSI:
				hl, _ := history.ParseLevel(l.String())
				want, err = oracle.Mixed(hh, hl)
			case execoracle.Mixed:
				want, err = oracle.Mixed(hh, def)
			default:
				hl, _ := history.ParseLevel(l.String())
				want, err = oracle.Check(hh, hl)
			}
			if err != nil {
				t.Fatalf("older oracle: %v\n%s", err, h.JSONL())
			}
			if got != want {
				differ++
				t.Errorf("%v (default %v): execoracle %v, older oracle %v\n%s", l, o.Default, got, want, h.JSONL())
			}
			total++
			if got {
				sat++
			}
		}
		t.Logf("%v: %d histories, %d satisfied, %d disagreements", l, total, sat, differ)
	}
}
