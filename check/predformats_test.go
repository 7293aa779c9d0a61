package check_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/formats/viper"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/execoracle"
)

// TestPredicateFormatsRoundTrip: the oracle's random histories of rows
// (inserts, updates, deletes, absent reads, predicate reads over key
// ranges, repeated values, aborted and unknown outcomes) go JSONL → EDN →
// JSONL and JSONL → Viper → JSONL, as convert takes them. Each writer
// either refuses with ErrCannotHold, or every history read back gets the
// verdict of the original at RC, RA, CC, RR, PC, PSI, SI and SER, which is
// the oracle's. Two profiles: as generated, and with every predicate read
// widened to all rows and every outcome known (Elle's predicate reads
// cover every key; Viper has no abort or unknown outcome), whose rows the
// widened reads may now miss. Both formats must hold a good share,
// predicate reads included. HYPERISO_PRED_RT_N sets how many histories
// per profile (CI: 150).
func TestPredicateFormatsRoundTrip(t *testing.T) {
	n := 150
	if v, err := strconv.Atoi(os.Getenv("HYPERISO_PRED_RT_N")); err == nil && v > 0 {
		n = v
	}
	levels := []history.Level{history.RC, history.RA, history.CC, history.RR, history.PC, history.PSI, history.SI, history.SER}
	oracleLevels := []execoracle.Level{execoracle.RC, execoracle.RA, execoracle.CC, execoracle.RR, execoracle.PC, execoracle.PSI, execoracle.SI, execoracle.SER}
	type via struct {
		name  string
		write func(*history.History) (*history.History, error)
	}
	edn := via{"edn", func(h *history.History) (*history.History, error) {
		var buf bytes.Buffer
		if err := elle.Write(&buf, h); err != nil {
			return nil, err
		}
		return formats.ReadStream(bytes.NewReader(buf.Bytes()), "rt.edn", formats.Options{})
	}}
	vip := via{"viper", func(h *history.History) (*history.History, error) {
		dir := filepath.Join(t.TempDir(), "v")
		if err := viper.Write(dir, h); err != nil {
			return nil, err
		}
		return formats.Read(dir, formats.Options{})
	}}
	toJSONL := func(h *history.History) *history.History {
		var buf bytes.Buffer
		if err := jsonl.Write(&buf, h); err != nil {
			t.Fatal(err)
		}
		h2, err := formats.ReadStream(bytes.NewReader(buf.Bytes()), "rt.jsonl", formats.Options{})
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		return h2
	}
	verdict := func(h *history.History, l history.Level) string {
		res, err := check.Check(context.Background(), h, l, check.Options{})
		if err != nil {
			return "error: " + err.Error()
		}
		return res.Verdict.String()
	}
	for _, widen := range []bool{false, true} {
		rng := rand.New(rand.NewSource(2929))
		held := map[string]int{}
		heldSelects := map[string]int{}
		refused := map[string]int{}
		for range n {
			o := execoracle.PredicateGenOptions(execoracle.SER)
			o.KeyRangesOnly = true
			if widen {
				o.PUnknown, o.PAborted = 0, 0
			}
			g := execoracle.Generate(rng, o)
			if widen {
				for _, tx := range g.Txns {
					for _, op := range tx.Ops {
						if op.Pred != nil {
							op.Pred.Lo, op.Pred.Hi = -1000, 1000
						}
					}
				}
			}
			text := g.JSONL()
			h, err := formats.ReadStream(bytes.NewReader(text), "g.jsonl", formats.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i, l := range levels {
				want = append(want, verdict(h, l))
				if sat, _ := execoracle.Satisfies(g, oracleLevels[i], execoracle.SER); !strings.Contains(want[i], "nothing to check") &&
					(want[i] == "satisfied") != sat {
					t.Fatalf("at %v the checker says %s, the oracle %v:\n%s", l, want[i], sat, text)
				}
			}
			for _, w := range []via{edn, vip} {
				h2, err := w.write(h)
				if err != nil {
					if !errors.Is(err, formats.ErrCannotHold) {
						t.Fatalf("%s: %v\n%s", w.name, err, text)
					}
					refused[w.name]++
					continue
				}
				held[w.name]++
				if len(h.Selects) > 0 {
					heldSelects[w.name]++
				}
				h3 := toJSONL(h2)
				for i, l := range levels {
					if got := verdict(h2, l); got != want[i] {
						t.Fatalf("%v through %s: %s, before %s\n%s", l, w.name, got, want[i], text)
					}
					if got := verdict(h3, l); got != want[i] {
						t.Fatalf("%v through %s and back to JSONL: %s, before %s\n%s", l, w.name, got, want[i], text)
					}
				}
			}
		}
		t.Logf("widened %v, %d histories: held %v (with predicate reads %v), refused %v", widen, n, held, heldSelects, refused)
		for _, w := range []string{"edn", "viper"} {
			if held[w] < n/10 || heldSelects[w] < n/20 {
				t.Errorf("%s held %d histories, %d with predicate reads, of %d", w, held[w], heldSelects[w], n)
			}
		}
	}
}
