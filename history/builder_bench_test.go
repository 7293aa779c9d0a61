package history

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkBuilderScale feeds a Builder the operation stream of the
// scalability setting (50 sessions, 20 operations a transaction, half
// reads, 50,000 keys, every write a fresh value), without any format:
// reads return the key's latest value (serial) or its initial value
// (initial, as the scale benchmark's unique histories do); /raw adds
// each transaction's operations with one AddRaw, /par with values
// interned in parallel (SetParallel).
func BenchmarkBuilderScale(b *testing.B) {
	const txns, ops, keys = 300000, 20, 50000
	for _, mode := range []string{"serial", "initial", "serial/raw", "initial/raw", "serial/raw/par", "initial/raw/par"} {
		raw := strings.Contains(mode, "/raw")
		par := strings.HasSuffix(mode, "/par")
		b.Run(mode, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 3))
			type op struct {
				write    bool
				key, val int64
			}
			stream := make([]op, 0, txns*ops)
			latest := make([]int64, keys)
			next := int64(1)
			for range txns * ops {
				k := rng.IntN(keys)
				if rng.IntN(2) == 0 {
					v := latest[k]
					if strings.HasPrefix(mode, "initial") {
						v = 0
					}
					stream = append(stream, op{false, int64(k + 1), v})
					continue
				}
				latest[k] = next
				stream = append(stream, op{true, int64(k + 1), next})
				next++
			}
			rawOps := make([]RawOp, len(stream))
			for i, o := range stream {
				rawOps[i] = RawOp{Kind: OpRead, Key: o.key, Value: o.val}
				if o.write {
					rawOps[i].Kind = OpWrite
				}
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				hb := NewBuilder("gen", "test")
				if par {
					hb.SetParallel(ParallelBatch)
				}
				for i := range txns {
					t := hb.Begin(hb.Session(int64(i%50+1)), int64(i+1), Committed, Pos{})
					if raw {
						hb.AddRaw(t, rawOps[i*ops:(i+1)*ops])
						continue
					}
					for _, o := range stream[i*ops : (i+1)*ops] {
						k := hb.KeyID(o.key)
						if o.write {
							hb.WriteID(t, k, hb.ValueID(k, o.val))
						} else {
							hb.ReadID(t, k, hb.ValueID(k, o.val))
						}
					}
				}
				hb.InitAllKeys(0)
				hb.Finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*txns*ops), "ns/op")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*txns*ops), "cpu-ns/op")
		})
	}
}

// BenchmarkIndexScale builds the index of a history in the scalability
// setting (100,000 transactions, 2M operations): as Index does (radix:
// the writers sorted into place, two cores when GOMAXPROCS allows), and
// as the tests' reference does (counting, one core).
func BenchmarkIndexScale(b *testing.B) {
	const txns, ops, keys = 100000, 20, 50000
	rng := rand.New(rand.NewPCG(3, 3))
	hb := NewBuilder("gen", "test")
	next := int64(1)
	for i := range txns {
		t := hb.Begin(hb.Session(int64(i%50+1)), int64(i+1), Committed, Pos{})
		for range ops {
			k := int64(rng.IntN(keys) + 1)
			if rng.IntN(2) == 0 {
				hb.Read(t, k, 0)
				continue
			}
			hb.Write(t, k, next)
			next++
		}
	}
	hb.InitAllKeys(0)
	h := hb.Finish()
	for _, mode := range []string{"counting", "radix"} {
		b.Run(mode, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if mode == "counting" {
					indexByCounting(h)
				} else {
					buildIndex(h)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*txns*ops), "ns/op")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*txns*ops), "cpu-ns/op")
		})
	}
}
