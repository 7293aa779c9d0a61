package online

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/hyperiso/hyperiso/history"
)

// foldable says at which levels the folded past can be summed up by a
// T⊥ that writes each key's last version (docs/online.md, "Folding"):
// those whose commit order contains session order and reads-from and
// whose reads see everything that precedes them that way, so that a
// transaction after a cut sees the whole folded part. RC and RA see only
// direct predecessors, and strict-ser's real-time order may run backwards
// across a cut: they keep the whole history.
var foldable = map[history.Level]bool{
	history.CC: true, history.PC: true, history.PSI: true, history.SI: true, history.SER: true,
}

// FenceKeyMeta is the header's metadata field naming the fence key
// (collect --fence-every writes it).
const FenceKeyMeta = "fence_key"

// folder is what a Checker keeps of the folded past.
type folder struct {
	init     map[int64]int64 // T⊥ of the window: each folded key's last version
	known    map[int64]bool  // the sessions at the last fold
	key      int64           // the fence key
	txns     int             // transactions folded away
	ops      int             // their operations (the end line counts them)
	cuts     int             // cuts folded at
	broken   string          // why folding can no longer give the offline verdict
	header   []byte          // the stream's header line (synthesised if none)
	headerNo int             // its line number
}

// cutPlan is one fold: the transactions before a cut and T⊥'s new writes.
type cutPlan struct {
	inP    []bool // by TxnID
	n, ops int
	init   map[int64]int64 // key → value: the last folded version of each key written in P
}

// fenceInfo tells fences apart in a parsed window: a fence is a committed
// transaction that reads and writes the fence key, a fence read one that
// only reads it.
type fenceInfo struct {
	h      *history.History
	fk     history.KeyID
	writer map[history.Version]history.TxnID // committed writers, T⊥ included
}

func newFenceInfo(h *history.History, fenceKey int64) (*fenceInfo, bool) {
	fi := &fenceInfo{h: h, fk: -1}
	for k := range h.NumKeys() {
		if h.Key(history.KeyID(k)) == fenceKey {
			fi.fk = history.KeyID(k)
		}
	}
	if fi.fk < 0 {
		return nil, false
	}
	fi.writer = make(map[history.Version]history.TxnID)
	for t := range h.Txns {
		if h.Txns[t].Status != history.Committed {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind == history.OpWrite {
				fi.writer[history.Version{Key: op.Key, Value: op.Value}] = history.TxnID(t)
			}
		}
	}
	return fi, true
}

// fenceRead returns the value of t's first read of the fence key, and
// whether t writes it.
func (fi *fenceInfo) fenceRead(t history.TxnID) (v history.ValueID, reads, writes bool) {
	for _, op := range fi.h.Txns[t].Ops {
		if op.Key != fi.fk {
			continue
		}
		switch {
		case op.Kind == history.OpRead && !reads && !writes:
			v, reads = op.Value, true
		case op.Kind == history.OpWrite:
			writes = true
		}
	}
	return v, reads, writes
}

func (fi *fenceInfo) isFence(t history.TxnID) bool {
	if t <= history.InitTxn || fi.h.Txns[t].Status != history.Committed {
		return false
	}
	_, r, w := fi.fenceRead(t)
	return r && w
}

// chain walks the fence chain back from the writer of v: each fence read
// the value its predecessor wrote. It returns the fences met and whether
// the walk ended at T⊥ (the folded past) rather than at a transaction that
// is no fence or a value nobody wrote.
func (fi *fenceInfo) chain(v history.ValueID) (map[history.TxnID]bool, bool) {
	seen := map[history.TxnID]bool{}
	for {
		w, ok := fi.writer[history.Version{Key: fi.fk, Value: v}]
		switch {
		case !ok:
			return seen, false
		case w == history.InitTxn:
			return seen, true
		case !fi.isFence(w) || seen[w]:
			return seen, false
		}
		seen[w] = true
		v, _, _ = fi.fenceRead(w)
	}
}

// cuts finds the window's cuts. Cut r is exact when every session's r-th
// fence is followed in its session by a fence read of one value whose
// writer's chain holds all those fences: everything up to a session's
// fence then precedes, by session order and reads-from, the fence read
// of every session and so all that follows it. bounds[r][s] is the index
// in session s of its r-th fence.
func (fi *fenceInfo) cuts() [][]int {
	h := fi.h
	fences := make([][]int, len(h.Sessions))
	for s, sess := range h.Sessions {
		for i, t := range sess.Txns {
			if fi.isFence(t) {
				fences[s] = append(fences[s], i)
			}
		}
	}
	var out [][]int
	for r := 0; ; r++ {
		bound := make([]int, len(h.Sessions))
		var v history.ValueID
		var members []history.TxnID
		for s, sess := range h.Sessions {
			if len(sess.Txns) == 0 {
				bound[s] = -1
				continue
			}
			if r >= len(fences[s]) || fences[s][r]+1 >= len(sess.Txns) {
				return out
			}
			i := fences[s][r]
			g := sess.Txns[i+1]
			gv, reads, writes := fi.fenceRead(g)
			if !reads || writes || h.Txns[g].Status != history.Committed || len(members) > 0 && gv != v {
				return out
			}
			v, bound[s] = gv, i
			members = append(members, sess.Txns[i])
		}
		if len(members) == 0 {
			return out
		}
		in, _ := fi.chain(v)
		for _, f := range members {
			if !in[f] {
				return out
			}
		}
		out = append(out, bound)
	}
}

// newSessionsOK says whether every session not known at the last fold
// begins after it: with a fence read whose chain goes back to the folded
// past's last fence (T⊥ of the window).
func (fi *fenceInfo) newSessionsOK(known map[int64]bool) (string, bool) {
	for _, sess := range fi.h.Sessions {
		if known[sess.ID] || len(sess.Txns) == 0 {
			continue
		}
		t := sess.Txns[0]
		v, reads, _ := fi.fenceRead(t)
		if reads && fi.h.Txns[t].Status == history.Committed {
			if _, ok := fi.chain(v); ok {
				continue
			}
		}
		return fmt.Sprintf("%s: session %d began after the history was folded without first reading the fence key, so it may be ordered before folded transactions", fi.h.Txns[t].Pos, sess.ID), false
	}
	return "", true
}

// plan works out the fold at cut bound (and last, the latest cut): the
// transactions P before it, and each key's last version in P. It fails
// (with why) when P holds a transaction of unknown outcome, a read from
// after the cut, or a key whose last version in P is not known: two last
// writers unordered by session order and reads-from, and the key not
// written again before the latest cut (after which a read of either
// version is stale).
func (fi *fenceInfo) plan(bound, last []int) (*cutPlan, string) {
	h := fi.h
	n := len(h.Txns)
	p := &cutPlan{inP: make([]bool, n), init: map[int64]int64{}}
	nS := len(h.Sessions)
	idx := make([]int32, n) // position among P's transactions
	var order []history.TxnID
	for s, sess := range h.Sessions {
		for i := 0; i <= bound[s]; i++ {
			t := sess.Txns[i]
			if h.Txns[t].Status == history.Unknown {
				return nil, fmt.Sprintf("%s: a transaction of unknown outcome before the cut", h.Txns[t].Pos)
			}
			p.inP[t] = true
			idx[t] = int32(len(order))
			order = append(order, t)
			p.ops += len(h.Txns[t].Ops)
		}
	}
	p.n = len(order)
	if p.n == 0 {
		return nil, "nothing before the cut"
	}
	if int64(p.n)*int64(nS) > 64<<20 {
		return nil, fmt.Sprintf("%d transactions of %d sessions before the cut: too many to order", p.n, nS)
	}
	// Vector clocks over session order and reads-from within P, in a
	// topological order (Kahn): vc[x*nS+s] is 1 + the index in session s
	// of the last transaction of s that precedes x (or is x).
	preds := make([][]int32, p.n)
	indeg := make([]int32, p.n)
	succ := make([][]int32, p.n)
	for x, t := range order {
		tx := &h.Txns[t]
		if tx.Index > 0 {
			preds[x] = append(preds[x], idx[h.Sessions[tx.Session].Txns[tx.Index-1]])
		}
		if tx.Status != history.Committed {
			continue
		}
		for _, op := range tx.Ops {
			if op.Kind != history.OpRead {
				continue
			}
			w, ok := fi.writer[history.Version{Key: op.Key, Value: op.Value}]
			switch {
			case !ok || w == t || w == history.InitTxn:
			case !p.inP[w]:
				return nil, fmt.Sprintf("%s: a transaction before the cut reads from one after it", tx.Pos)
			default:
				preds[x] = append(preds[x], idx[w])
			}
		}
		for _, y := range preds[x] {
			succ[y] = append(succ[y], int32(x))
		}
		indeg[x] = int32(len(preds[x]))
	}
	vc := make([]int32, p.n*nS)
	queue := make([]int32, 0, p.n)
	for x := range p.n {
		if indeg[x] == 0 {
			queue = append(queue, int32(x))
		}
	}
	done := 0
	for len(queue) > 0 {
		x := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		done++
		row := vc[int(x)*nS : int(x+1)*nS]
		for _, y := range preds[x] {
			for s, c := range vc[int(y)*nS : int(y+1)*nS] {
				row[s] = max(row[s], c)
			}
		}
		tx := &h.Txns[order[x]]
		row[tx.Session] = tx.Index + 1
		for _, z := range succ[x] {
			if indeg[z]--; indeg[z] == 0 {
				queue = append(queue, z)
			}
		}
	}
	if done < p.n {
		return nil, "session order and reads-from form a cycle before the cut"
	}
	sum := func(x int32) (s int64) {
		for _, c := range vc[int(x)*nS : int(x+1)*nS] {
			s += int64(c)
		}
		return s
	}
	// Each key's committed writers in P, with the value each wrote last.
	type write struct {
		x   int32
		val history.ValueID
	}
	writes := map[history.KeyID][]write{}
	for x, t := range order {
		if h.Txns[t].Status != history.Committed {
			continue
		}
		last := map[history.KeyID]history.ValueID{}
		for _, op := range h.Txns[t].Ops {
			if op.Kind == history.OpWrite {
				last[op.Key] = op.Value
			}
		}
		for k, v := range last {
			writes[k] = append(writes[k], write{int32(x), v})
		}
	}
	var writtenLater, readLater map[history.KeyID]history.ValueID
	for k, ws := range writes {
		best := ws[0]
		for _, w := range ws[1:] {
			if sum(w.x) > sum(best.x) {
				best = w
			}
		}
		greatest := true
		row := vc[int(best.x)*nS : int(best.x+1)*nS]
		for _, w := range ws {
			tx := &h.Txns[order[w.x]]
			if row[tx.Session] < tx.Index+1 {
				greatest = false
				break
			}
		}
		val := best.val
		if !greatest {
			if writtenLater == nil {
				writtenLater, readLater = fi.after(p.inP, last)
			}
			if _, ok := writtenLater[k]; !ok {
				return nil, fmt.Sprintf("key %d: its last writes before the cut are not ordered, and it is not written again before the latest cut", h.Key(k))
			}
			if v, ok := readLater[k]; ok {
				val = v
			}
		}
		p.init[h.Key(k)] = h.Value(k, val)
	}
	return p, ""
}

// after returns the keys that committed transactions after the cut and
// up to the latest cut (last) write, and, per key, a version written
// before the cut that a transaction after it reads.
func (fi *fenceInfo) after(inP []bool, last []int) (written, read map[history.KeyID]history.ValueID) {
	h := fi.h
	written, read = map[history.KeyID]history.ValueID{}, map[history.KeyID]history.ValueID{}
	for s, sess := range h.Sessions {
		for i, t := range sess.Txns {
			if inP[t] || h.Txns[t].Status != history.Committed {
				continue
			}
			for _, op := range h.Txns[t].Ops {
				switch op.Kind {
				case history.OpWrite:
					if i <= last[s] {
						written[op.Key] = op.Value
					}
				case history.OpRead:
					if w, ok := fi.writer[history.Version{Key: op.Key, Value: op.Value}]; ok && w > history.InitTxn && inP[w] {
						read[op.Key] = op.Value
					}
				}
			}
		}
	}
	return written, read
}

// initLine renders T⊥'s writes as the window's init line.
func initLine(init map[int64]int64) []byte {
	keys := make([]int64, 0, len(init))
	for k := range init {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte(`{"init":true,"ops":[`)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `["w",`...)
		b = strconv.AppendInt(b, k, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, init[k], 10)
		b = append(b, ']')
	}
	return append(b, "]}\n"...)
}

// window renders the lines of snap that stay after folding p: the header,
// the init line, and every transaction line after the cut (given its id
// if it had none), each with its number in the whole stream.
func (f *folder) window(snap snapshot, h *history.History, p *cutPlan) ([]byte, []lineInfo) {
	gone := make(map[int]bool, p.n) // line numbers in the stream
	for t, in := range p.inP {
		if in {
			gone[h.Txns[t].Pos.Line] = true
		}
	}
	out := make([]byte, 0, len(snap.buf)/2)
	lines := make([]lineInfo, 0, len(snap.lines)-p.n+2)
	out = append(out, f.header...)
	lines = append(lines, lineInfo{start: 0, kind: lineHeader, no: f.headerNo})
	lines = append(lines, lineInfo{start: len(out), kind: lineOther, no: f.headerNo})
	out = append(out, initLine(f.init)...)
	for i, ln := range snap.lines {
		if ln.kind != lineTxn || gone[ln.no] {
			continue
		}
		end := len(snap.buf)
		if i+1 < len(snap.lines) {
			end = snap.lines[i+1].start
		}
		line := snap.buf[ln.start:end]
		info := ln
		info.start = len(out)
		if !ln.hasID {
			line, info.hasID = withID(line, ln.ord), true
		}
		out = append(out, line...)
		lines = append(lines, info)
	}
	return out, lines
}

// withID returns a transaction line given the id ord after its opening
// brace (a line classify took for a transaction has one).
func withID(line []byte, ord int) []byte {
	j := bytes.IndexByte(line, '{')
	if j < 0 {
		return line
	}
	out := make([]byte, 0, len(line)+16)
	out = append(out, line[:j+1]...)
	out = append(out, `"id":`...)
	out = strconv.AppendInt(out, int64(ord), 10)
	out = append(out, ',')
	return append(out, line[j+1:]...)
}
