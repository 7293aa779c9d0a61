package history

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// action is one step of a random build script.
type action struct {
	what     int // 0 an operation, 1 begin, 2 named write, 3 named read, 4 aborted write, 5 version hint, 6 an operation of an earlier transaction (val picks which)
	kind     OpKind
	key, val int64
	name     string
}

func randomScript(rng *rand.Rand, keys, vals int) []action {
	var s []action
	names := []string{"a", "b", "c"}
	for range rng.IntN(30) {
		s = append(s, action{what: 1, key: int64(rng.IntN(4)), val: int64(rng.IntN(1000))})
		for range rng.IntN(200) {
			a := action{
				kind: []OpKind{OpRead, OpWrite, OpAppend}[rng.IntN(3)],
				key:  int64(rng.IntN(keys)) - 3, val: int64(rng.IntN(vals)) - 5,
				name: names[rng.IntN(len(names))],
			}
			if r := rng.IntN(40); r < 5 {
				a.what = 2 + r
			}
			s = append(s, a)
		}
	}
	return s
}

// runScript runs script; with groups, runs of integer operations of one
// transaction go through AddRaw in groups of random sizes; with parallel,
// AddRaw leaves up to batch values for flush (Builder.SetParallel), and
// room is reserved after the first transaction (ReserveScaled).
func runScript(script []action, groups *rand.Rand, batch int) *History {
	b := NewBuilder("x", "y")
	b.SetParallel(batch)
	var pending []RawOp
	var txn TxnID
	var txns []TxnID
	var named []Version // versions interned by name so far
	var seen [][]Op     // what Ops returned
	flush := func() {
		if len(pending) > 0 {
			b.AddRaw(txn, pending)
			pending = pending[:0]
		}
	}
	limit := 0
	for _, a := range script {
		if a.what != 0 || groups == nil {
			flush()
		}
		switch a.what {
		case 1:
			txn = b.Begin(b.Session(a.key), a.val, Committed, Pos{})
			txns = append(txns, txn)
			if batch > 0 && len(txns) == 2 {
				// Room made part way, as a reader of a large file does.
				b.ReserveScaled(float64(a.val%50) / 3)
			}
		case 6:
			// An earlier transaction's span moves out of the arena.
			if len(txns) == 0 {
				break
			}
			to := txns[int(uint64(a.val)%uint64(len(txns)))]
			if a.kind == OpAppend && len(named) > 0 {
				// Interned long before: nothing else interns values here.
				v := named[int(uint64(a.key)%uint64(len(named)))]
				b.WriteID(to, v.Key, v.Value)
				break
			}
			if groups != nil {
				b.AddRaw(to, []RawOp{{Kind: a.kind, Key: a.key, Value: a.val}})
			} else {
				map[OpKind]func(TxnID, int64, int64){OpRead: b.Read, OpWrite: b.Write, OpAppend: b.Append}[a.kind](to, a.key, a.val)
			}
			if a.kind == OpRead {
				// What the builder holds for it so far, values included,
				// goes into the history to be compared.
				seen = append(seen, slices.Clone(b.Ops(to)))
			}
		case 2:
			k := b.KeyNamed(a.name)
			v := b.ValueNamed(k, a.name)
			named = append(named, Version{k, v})
			b.WriteID(txn, k, v)
		case 3:
			k := b.KeyID(a.key)
			b.ReadID(txn, k, b.ValueNamed(k, a.name))
		case 4:
			b.AbortedWrite(a.key, a.val)
		case 5:
			b.VersionHint(a.key, a.val, a.val+1)
		default:
			if groups != nil {
				if len(pending) >= limit {
					flush()
					limit = 1 + groups.IntN(70)
				}
				pending = append(pending, RawOp{Kind: a.kind, Key: a.key, Value: a.val})
				continue
			}
			switch a.kind {
			case OpRead:
				b.Read(txn, a.key, a.val)
			case OpWrite:
				k := b.KeyID(a.key)
				b.WriteID(txn, k, b.ValueIDOf(k, a.key, a.val))
			default:
				b.Append(txn, a.key, a.val)
			}
		}
	}
	flush()
	b.InitAllKeys(0)
	b.SetMeta("ops", fmt.Sprint(seen))
	return b.Finish()
}

// TestAddRawMatchesOneByOne builds 1,500 random histories twice,
// once adding operations with Read, Write and Append one by one and once
// in AddRaw groups of random sizes, with named keys and values, aborted
// writes and version hints between them, and requires identical results.
// It also checks both against a brute-force oracle of interning: each
// integer key's values in the order they first appear.
func TestAddRawMatchesOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for round := range 1500 {
		keys, vals := 1+rng.IntN(40), 1+rng.IntN(60)
		if round%25 == 0 {
			keys, vals = 2000, 1<<20 // tables that grow, keys with few values
		}
		script := randomScript(rng, keys, vals)
		one := runScript(script, nil, 0)
		grouped := runScript(script, rand.New(rand.NewPCG(uint64(round), 2)), 0)
		require.Equal(t, one, grouped, "round %d", round)
		// Values left pending by AddRaw, flushed in batches of random
		// sizes, on two goroutines from the smallest batch up.
		par := runScript(script, rand.New(rand.NewPCG(uint64(round), 2)), 1+rng.IntN(300))
		require.Equal(t, one, par, "round %d (parallel)", round)

		// The oracle: integer versions in order of appearance.
		type kv struct{ k, v int64 }
		seen := map[kv]bool{}
		want := map[int64][]int64{}
		note := func(k, v int64) {
			if !seen[kv{k, v}] {
				seen[kv{k, v}] = true
				want[k] = append(want[k], v)
			}
		}
		hasNamed := false
		for _, a := range script {
			switch a.what {
			case 0, 4:
				note(a.key, a.val)
			case 2:
				hasNamed = true
			case 6:
				if a.kind != OpAppend || !hasNamed {
					note(a.key, a.val)
				}
			case 5:
				note(a.key, a.val)
				note(a.key, a.val+1)
			}
		}
		for k, raw := range grouped.Keys {
			if grouped.KeyNames != nil && grouped.KeyNames[k] != "" {
				continue
			}
			var got []int64
			for v, x := range grouped.Values[k] {
				if grouped.ValueNames == nil || grouped.ValueNames[k] == nil || grouped.ValueNames[k][v] == "" {
					got = append(got, x)
				}
			}
			w := want[raw]
			if len(got) > len(w) { // T⊥'s 0, added by Finish when no operation had it
				require.Equal(t, int64(0), got[len(got)-1], "round %d key %d", round, raw)
				got = got[:len(w)]
			}
			if len(w)+len(got) > 0 {
				require.Equal(t, w, got, "round %d key %d", round, raw)
			}
		}
	}
}
