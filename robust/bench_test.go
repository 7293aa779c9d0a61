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
