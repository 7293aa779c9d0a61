package elle_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/elle"
	"github.com/hyperiso/hyperiso/history"
)

// listTruth decides SER or SI for a list-append history straight from the
// definitions, with real lists: it tries every subset of the unknown
// transactions and every order of the chosen ones that respects session
// order; executing them in that order (SER), or with each transaction on a
// snapshot of a prefix of that commit order and no conflicting writer
// between its snapshot and its commit (SI), every committed read must return
// exactly the list it returned. Tiny histories only.
//
// With rt (SER only) the order must also respect real time: a transaction
// that completed before another was invoked comes first (strict
// serializability).
func listTruth(h *history.History, level history.Level, rt bool) bool {
	var base, unknown []history.TxnID
	for t := 1; t < len(h.Txns); t++ {
		switch h.Txns[t].Status {
		case history.Committed:
			base = append(base, history.TxnID(t))
		case history.Unknown:
			unknown = append(unknown, history.TxnID(t))
		}
	}
	for mask := 0; mask < 1<<len(unknown); mask++ {
		nodes := slices.Clone(base)
		for i, u := range unknown {
			if mask&(1<<i) != 0 {
				nodes = append(nodes, u)
			}
		}
		s := &searcher{h: h, si: level == history.SI, rt: rt, nodes: nodes, placed: map[history.TxnID]int{}}
		if s.search(map[int64][]int64{}) {
			return true
		}
	}
	return false
}

type searcher struct {
	h      *history.History
	si, rt bool
	nodes  []history.TxnID
	order  []history.TxnID
	placed map[history.TxnID]int
	states []map[int64][]int64 // states[i]: after order[:i]
}

// run executes t on state st; it reports whether t's reads match.
func (s *searcher) run(t history.TxnID, st map[int64][]int64, apply bool) (map[int64][]int64, bool) {
	own := map[int64][]int64{}
	for _, op := range s.h.Txns[t].Ops {
		k := s.h.Key(op.Key)
		switch op.Kind {
		case history.OpAppend, history.OpWrite:
			own[k] = append(own[k], s.h.Value(op.Key, op.Value))
		case history.OpReadList:
			want := s.h.List(op)
			got := append(slices.Clone(st[k]), own[k]...)
			if len(want) != len(got) {
				return nil, false
			}
			for i, v := range want {
				if s.h.Value(op.Key, v) != got[i] {
					return nil, false
				}
			}
		}
	}
	if !apply {
		return nil, true
	}
	out := make(map[int64][]int64, len(st))
	for k, l := range st {
		out[k] = l
	}
	for k, add := range own {
		out[k] = append(slices.Clone(st[k]), add...)
	}
	return out, true
}

func (s *searcher) search(st map[int64][]int64) bool {
	if len(s.states) == 0 {
		s.states = append(s.states, st)
	}
	if len(s.order) == len(s.nodes) {
		return true
	}
	for _, t := range s.nodes {
		if _, ok := s.placed[t]; ok || !s.ready(t) {
			continue
		}
		cur := s.states[len(s.states)-1]
		var next map[int64][]int64
		ok := false
		if !s.si {
			next, ok = s.run(t, cur, true)
		} else {
			// Snapshot after order[:p]: every session predecessor visible,
			// no writer of t's keys among order[p:].
			lo := 0
			for i, u := range s.order {
				if s.h.Txns[u].Session == s.h.Txns[t].Session {
					lo = i + 1
				}
			}
			for p := len(s.order); p >= lo && !ok; p-- {
				if s.conflicts(t, s.order[p:]) {
					break
				}
				_, ok = s.run(t, s.states[p], false)
			}
			if ok {
				// The reads were checked on the snapshot; the commit installs
				// the appends on the latest lists.
				next = s.install(t, cur)
			}
		}
		if !ok {
			continue
		}
		s.placed[t] = len(s.order)
		s.order = append(s.order, t)
		s.states = append(s.states, next)
		if s.search(next) {
			return true
		}
		s.order = s.order[:len(s.order)-1]
		s.states = s.states[:len(s.states)-1]
		delete(s.placed, t)
	}
	return false
}

// install applies t's appends to st.
func (s *searcher) install(t history.TxnID, st map[int64][]int64) map[int64][]int64 {
	out := make(map[int64][]int64, len(st))
	for k, l := range st {
		out[k] = l
	}
	for _, op := range s.h.Txns[t].Ops {
		if op.Kind.IsWrite() {
			k := s.h.Key(op.Key)
			out[k] = append(slices.Clone(out[k]), s.h.Value(op.Key, op.Value))
		}
	}
	return out
}

func (s *searcher) conflicts(t history.TxnID, between []history.TxnID) bool {
	for _, u := range between {
		for _, a := range s.h.Txns[t].Ops {
			if !a.Kind.IsWrite() {
				continue
			}
			for _, b := range s.h.Txns[u].Ops {
				if b.Kind.IsWrite() && b.Key == a.Key {
					return true
				}
			}
		}
	}
	return false
}

// ready: every earlier member of t's session, and with rt every member
// that completed before t was invoked, is placed.
func (s *searcher) ready(t history.TxnID) bool {
	for _, u := range s.nodes {
		before := u < t && s.h.Txns[u].Session == s.h.Txns[t].Session
		if s.rt {
			tu, tt := &s.h.Txns[u], &s.h.Txns[t]
			before = before || (tu.Timed && tt.Timed && tu.End < tt.Start)
		}
		if before {
			if _, ok := s.placed[u]; !ok {
				return false
			}
		}
	}
	return true
}

func smallCfg(rng *rand.Rand, mode simMode, unique bool) genCfg {
	return genCfg{
		mode: mode, procs: 1 + rng.IntN(3), txns: 2 + rng.IntN(5), keys: 1 + rng.IntN(3), maxOps: 3,
		dupProb: 0.3, failProb: 0.1, infoProb: 0.1, openProb: 0.2, uniqueVals: unique,
	}
}

func hasDuplicates(h *history.History) bool {
	return h.Stats().DuplicateVersions > 0 || strings.Contains(warnings(h), "duplicate-value") || strings.Contains(warnings(h), "times to key")
}

// The differential test: on random list-append histories from a simulated
// serial, SI and broken database, the verdict from the list-append reading
// (hints applied) agrees with list semantics decided by brute force, with
// the rw-register conversion checked by check.Check, and with the oracle on
// that conversion; check.Check on the list-append history itself never
// contradicts it and, once it applies the hints, agrees.
func TestDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 30))
	levels := []history.Level{history.SER, history.SI}
	type tally struct{ n, violated, dups, incomplete, oracle, checkSame, strictOnly int }
	stats := map[simMode]*tally{}
	for iter := range 1500 {
		mode := simMode(iter % 3)
		unique := iter%2 == 0
		src := generate(rng, smallCfg(rng, mode, unique))
		h, err := elle.Parse(strings.NewReader(src), "gen.edn", elle.Options{})
		require.NoError(t, err, src)
		require.NoError(t, h.CheckInvariants())
		st := stats[mode]
		if st == nil {
			st = &tally{}
			stats[mode] = st
		}
		st.n++
		dups := hasDuplicates(h)
		if dups {
			st.dups++
		}
		compatible := true
		_, fs := listView(t, h)
		for _, f := range fs {
			if f.Kind == history.IncompatibleOrder {
				compatible = false
			}
		}
		for _, level := range levels {
			truth := listTruth(h, level, false)
			v := hintDecide(t, h, level, false)
			require.True(t, v.decided, "%s", src)
			switch {
			case mode == simSerial:
				require.True(t, truth, "serial execution must be serializable:\n%s", src)
			case mode == simSI && level == history.SI:
				require.True(t, truth, "SI execution must satisfy SI:\n%s", src)
			}
			if !v.ok {
				st.violated++
			}
			// Sound always; complete when values are unique.
			if !v.ok {
				require.False(t, truth, "%v: hints say violated (%s %v) but list semantics allow it:\n%s", level, v.why, v.cycle, src)
			}
			if !dups {
				require.Equal(t, truth, v.ok, "%v: list semantics %v, hints %v:\n%s", level, truth, v.ok, src)
			} else if v.ok != truth {
				st.incomplete++
			}
			res := checkVerdict(t, h, level)
			if checkUsesHints(t) {
				require.Equal(t, v.ok, res.Verdict == check.Satisfied, "%v: check.Check %v, reference %v:\n%s", level, res.Verdict, v.ok, src)
			} else if res.Verdict == check.Violated {
				require.False(t, truth, "%v: check.Check says violated:\n%s", level, src)
			}
			if res.Verdict == check.Satisfied == v.ok {
				st.checkSame++
			}
			if level == history.SER {
				// Strict serializability: real-time order on top.
				strict := listTruth(h, level, true)
				vs := hintDecide(t, h, level, true)
				require.True(t, vs.decided)
				if mode == simSerial {
					require.True(t, strict, "a serial execution at completion is strictly serializable:\n%s", src)
				}
				if !vs.ok {
					require.False(t, strict, "strict: hints say violated (%s %v):\n%s", vs.why, vs.cycle, src)
				}
				if !dups {
					require.Equal(t, strict, vs.ok, "strict: list semantics %v, hints %v:\n%s", strict, vs.ok, src)
				}
				if truth && !strict {
					st.strictOnly++
				}
			}
			if dups || !compatible {
				continue
			}
			reg := listViewH(t, h) // the register view: what the lists mean, as registers
			require.NoError(t, reg.CheckInvariants())
			rres := checkVerdict(t, reg, level)
			require.Equal(t, v.ok, rres.Verdict == check.Satisfied, "%v: rw-register conversion %v, list-append %v:\n%s", level, rres.Verdict, v.ok, src)
		}
	}
	for m := simSerial; m <= simBroken; m++ {
		s := stats[m]
		t.Logf("%-6s histories %d, with duplicate values %d; (history, level) pairs violated %d, incomplete with duplicates %d, also decided by the oracle %d, check.Check agreeing today %d; serializable but not strictly %d",
			m, s.n, s.dups, s.violated, s.incomplete, s.oracle, s.checkSame, s.strictOnly)
	}
}

// Larger histories: too big for brute force, but the serial and SI
// simulations fix the answer, and the rw-register conversion must agree.
func TestDifferentialLarger(t *testing.T) {
	rng := rand.New(rand.NewPCG(99, 1))
	disagree := 0
	for iter := range 120 {
		mode := simMode(iter % 3)
		cfg := genCfg{mode: mode, procs: 2 + rng.IntN(4), txns: 20 + rng.IntN(40), keys: 2 + rng.IntN(6), maxOps: 4,
			dupProb: 0.1, failProb: 0.05, infoProb: 0.03, openProb: 0.3, uniqueVals: iter%2 == 0}
		src := generate(rng, cfg)
		h, err := elle.Parse(strings.NewReader(src), "gen.edn", elle.Options{})
		require.NoError(t, err)
		dups := hasDuplicates(h)
		compatible := true
		_, fs := listView(t, h)
		for _, f := range fs {
			compatible = compatible && f.Kind != history.IncompatibleOrder
		}
		for _, level := range []history.Level{history.SER, history.SI} {
			v := hintDecide(t, h, level, mode == simSerial && level == history.SER)
			if !v.decided {
				continue
			}
			if mode == simSerial || (mode == simSI && level == history.SI) {
				require.True(t, v.ok, "%v %v: %s %v\n%s", mode, level, v.why, v.cycle, src)
			}
			if dups || !compatible {
				continue
			}
			rres := checkVerdict(t, listViewH(t, h), level)
			if v.ok != (rres.Verdict == check.Satisfied) {
				disagree++
				t.Errorf("%v %v: conversion %v, list-append %v\n%s", mode, level, rres.Verdict, v.ok, src)
			}
		}
	}
	require.Zero(t, disagree)
}
