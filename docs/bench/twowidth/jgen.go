//go:build ignore

// jgen writes a Jepsen-like history in hyperiso JSON Lines on standard
// output: P processes run transactions of 1 to -ops operations (reads and
// writes, half each) over -k keys against a snapshot-isolation store
// (snapshot reads, first committer wins), with real-time intervals; after
// each transaction a process takes a new session id with probability
// -renew, as Jepsen processes do after a crash; with -lost a commit skips
// the first-committer-wins test with that probability, which lets lost
// updates through. Deterministic for a seed.
//
//	go run docs/bench/twowidth/jgen.go -p 30 -commit 0.3 -renew 0.1 -n 8000 > few-keys.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
)

type ver struct{ ts, val int64 }
type op struct {
	w bool
	k int
	v int64
}
type txn struct {
	snap   int64
	ops    []op
	active bool
	start  int64
}

func main() {
	P := flag.Int("p", 30, "processes")
	K := flag.Int("k", 54, "keys")
	N := flag.Int("n", 10000, "committed txns")
	maxOps := flag.Int("ops", 4, "max ops")
	pc := flag.Float64("commit", 0.3, "commit prob per step")
	seed := flag.Uint64("seed", 1, "")
	vals := flag.Int("vals", 0, "values per key (0: unique)")
	renew := flag.Float64("renew", 0, "probability that a process gets a new session id after a txn")
	lost := flag.Float64("lost", 0, "probability that a commit skips the first-committer-wins test (lost updates: violates SI)")
	flag.Parse()
	rng := rand.New(rand.NewPCG(*seed, 7))
	vers := make([][]ver, *K+1)
	for k := range vers {
		vers[k] = []ver{{0, 0}}
	}
	read := func(k int, snap int64) int64 {
		vs := vers[k]
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].ts <= snap {
				return vs[i].val
			}
		}
		panic("no version")
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintln(out, `{"hyperiso":1,"init":"zero"}`)
	ts := int64(0)
	txs := make([]txn, *P)
	next := int64(1)
	committed := 0
	sid := make([]int, *P)
	for i := range sid {
		sid[i] = i + 1
	}
	nextSid := *P + 1
	step := int64(0)
	for committed < *N {
		step++
		p := rng.IntN(*P)
		t := &txs[p]
		if !t.active {
			t.active, t.snap, t.ops, t.start = true, ts, t.ops[:0], step
			n := 1 + rng.IntN(*maxOps)
			own := map[int]int64{}
			for range n {
				k := 1 + rng.IntN(*K)
				if rng.IntN(2) == 0 {
					v, ok := own[k]
					if !ok {
						v = read(k, t.snap)
					}
					t.ops = append(t.ops, op{false, k, v})
				} else {
					v := next
					next++
					if *vals > 0 {
						v = 1 + int64(rng.IntN(*vals))
					}
					own[k] = v
					t.ops = append(t.ops, op{true, k, v})
				}
			}
			continue
		}
		if rng.Float64() >= *pc {
			continue
		}
		t.active = false
		ok := true
		skip := *lost > 0 && rng.Float64() < *lost
		for _, o := range t.ops {
			if o.w && !skip && vers[o.k][len(vers[o.k])-1].ts > t.snap {
				ok = false
			}
		}
		status := ""
		if ok {
			ts++
			for _, o := range t.ops {
				if o.w {
					vs := vers[o.k]
					if vs[len(vs)-1].ts == ts {
						vs[len(vs)-1].val = o.v
					} else {
						vers[o.k] = append(vs, ver{ts, o.v})
					}
				}
			}
			committed++
		} else {
			status = `,"status":"aborted"`
		}
		fmt.Fprintf(out, `{"session":%d%s,"time":[%d,%d],"ops":[`, sid[p], status, t.start, step)
		if rng.Float64() < *renew {
			sid[p] = nextSid
			nextSid++
		}
		for i, o := range t.ops {
			if i > 0 {
				out.WriteByte(',')
			}
			kind := "r"
			if o.w {
				kind = "w"
			}
			fmt.Fprintf(out, `["%s",%d,%d]`, kind, o.k, o.v)
		}
		out.WriteString("]}\n")
	}
}
