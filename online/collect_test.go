package online

import (
	"bytes"
	"context"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
)

// collectFenced records a run of the memory store with fence rounds
// every 40 transactions of a session, as collect's stream writes it.
func collectFenced(t *testing.T, iso collect.Isolation, bugs memstore.Bug) []byte {
	t.Helper()
	cfg, err := workload.Defaults("general")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sessions, cfg.Txns, cfg.Ops, cfg.Keys, cfg.DupKeys = 8, 300, 6, 200, 0
	w, err := workload.New("general", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec := collect.NewRecorder(&buf)
	_, sum, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 3, Bugs: bugs}), w,
		collect.Options{Isolation: iso, Fences: collect.Fences{N: 40}, Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	// Up to 7 rounds (at 40, 80, …, 280 transactions; the last may miss
	// sessions that ended), 2 transactions a session each, and the seed.
	if sum.Fences < 1+6*2*cfg.Sessions {
		t.Fatalf("%d fence transactions, want at least %d", sum.Fences, 1+6*2*cfg.Sessions)
	}
	return buf.Bytes()
}

// A collect run with fences is folded as it streams in, and its final
// verdicts are the offline check's of the whole file, satisfied or not.
func TestCollectFencedStreamFolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		iso  collect.Isolation
		bugs memstore.Bug
		want check.Verdict // at SI
	}{
		{"serializable", collect.Serializable, 0, check.Satisfied},
		{"lost-update", collect.Snapshot, memstore.LostUpdate, check.Violated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := collectFenced(t, tc.iso, tc.bugs)
			h, err := jsonl.Parse(bytes.NewReader(data), "run", jsonl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			levels := levelsOf(t, []string{"si", "ser"})
			c, _ := New(Options{Name: "run", Levels: levels, Unique: true})
			ctx := context.Background()
			folded := 0
			for len(data) > 0 {
				n := min(len(data), 20000)
				c.Write(data[:n])
				data = data[n:]
				st, err := c.Check(ctx)
				if err != nil {
					t.Fatal(err)
				}
				folded = st.Folded
			}
			st, err := c.Finish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == check.Satisfied && folded == 0 {
				t.Errorf("nothing folded (%s)", st.Keeping)
			}
			for i, lv := range st.Levels {
				off, err := check.Check(ctx, h, levels[i], check.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if lv.Result.Verdict != off.Verdict {
					t.Errorf("%s: online %v, offline %v", lv.Level, lv.Result.Verdict, off.Verdict)
				}
			}
			if got := st.Levels[0].Result.Verdict; got != tc.want {
				t.Errorf("si: %v, want %v", got, tc.want)
			}
			t.Logf("%d transactions, %d folded at %d cuts, %d held at the end", st.Txns, st.Folded, st.Cuts, st.Held)
		})
	}
}
