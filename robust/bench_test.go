package robust

import (
	"fmt"
	"testing"
)

// BenchmarkAllocateYCSB times Allocate on the paper's scalability workload
// (10 operations per instance, 300 keys), generation excluded.
func BenchmarkAllocateYCSB(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		w, err := Generate("ycsb", GenOptions{Seed: 1, Instances: n})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Allocate(w)
			}
		})
	}
}

// BenchmarkCheckYCSB times Check of Allocate's answer on the same
// workloads.
func BenchmarkCheckYCSB(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		w, err := Generate("ycsb", GenOptions{Seed: 1, Instances: n})
		if err != nil {
			b.Fatal(err)
		}
		levels := Allocate(w).Levels
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Check(w, CheckOptions{Levels: levels}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExactSAT times one SAT question, encoding included, on YCSB-like
// workloads of m instances (2 operations each over m/2 keys, one strongly
// connected component in practice) at Allocate's robust levels, where the
// answer is a proof that no execution is non-serializable.
func BenchmarkExactSAT(b *testing.B) {
	for _, m := range []int{16, 32, 64, 96} {
		w, err := Generate("ycsb", GenOptions{Seed: 1, Instances: m, Keys: m / 2, Ops: 2})
		if err != nil {
			b.Fatal(err)
		}
		levels := Allocate(w).Levels
		all := make([]int32, m)
		for i := range all {
			all[i] = int32(i)
		}
		b.Run(fmt.Sprint(m), func(b *testing.B) {
			for b.Loop() {
				if ex, ok := newSATGroup(w, all, 0).solve(levels, Limits{}); ex != nil || !ok {
					b.Fatal("Allocate's levels are robust")
				}
			}
		})
	}
}

// BenchmarkExactGenerated times Exact, one SAT question per component, on
// the SmallBank and Courseware workloads (1,000 instances, seed 1) at
// RefineExact's allocation: the static criterion calls it not robust (its
// lowered instances are middles of static critical cycles), and Exact
// proves every component robust.
func BenchmarkExactGenerated(b *testing.B) {
	for _, kind := range []string{"smallbank", "courseware"} {
		w, err := Generate(kind, GenOptions{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		refined, _, err := Refine(w, Allocate(w).Levels)
		if err != nil {
			b.Fatal(err)
		}
		levels, _, _ := RefineExact(w, refined, Limits{})
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				if res := Exact(w, levels, Limits{}); !res.Decided || !res.Robust {
					b.Fatal("RefineExact's allocation is robust")
				}
			}
		})
	}
}
