package valueseq

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// searcher is one depth-first search over (session positions, current
// value). Steps that are free at the current value are taken at once
// (step.free); the search branches only on writes, and on leaving out an
// optional writer. A state every branch of which fails is remembered, so
// that the interleavings leading back to it are cut.
type searcher struct {
	ctx   context.Context
	fit   func(int64, string) error
	sess  [][]step
	pos   []int32
	cur   int32
	left  int // steps not yet taken or left out
	order []history.TxnID
	// total[v] counts the producers of value v not yet taken or left out:
	// the steps that write v and do not need it (one that needs v cannot
	// bring v back); rem[s][v] those of them in session s.
	total []int32
	rem   [][]int32
	// arrivals[s][p*V+v] and first[s][p] are the tables short reads.
	arrivals, first [][]int32
	// trail records each advance (session*2, +1 when taken) for undo.
	trail []int32

	dead    map[string]struct{}
	maxDead int64
	wide    bool // positions need 4 bytes in a state key
	key     []byte
	states  int64
	stop    error
	moves   [][]move // per depth, reused
	depth   int
}

// move is one branch: take session s's next step, or leave it out.
type move struct {
	s    int32
	take bool
	rank [3]int32
}

func newSearcher(h *history.History, include, optional func(history.TxnID) bool) *searcher {
	ix := h.Index()
	key := history.KeyID(-1)
	for t := 1; t < len(h.Txns) && key < 0; t++ {
		if h.Txns[t].Status != history.Aborted && len(h.Txns[t].Ops) > 0 {
			key = h.Txns[t].Ops[0].Key
		}
	}
	nv := 0
	if key >= 0 {
		nv = len(h.Values[key])
	}
	s := &searcher{cur: -1, total: make([]int32, nv), dead: map[string]struct{}{}}
	for _, op := range h.Txns[history.InitTxn].Ops {
		if op.Key == key && op.Kind == history.OpWrite {
			s.cur = int32(op.Value)
		}
	}
	longest := 0
	for _, ss := range h.Sessions {
		var steps []step
		rem := make([]int32, nv)
		for _, t := range ss.Txns {
			if !include(t) {
				continue
			}
			st := step{txn: t, need: -1, set: -1, opt: optional(t)}
			for _, r := range ix.Reads(t) {
				st.need = int32(r.Value)
			}
			for _, w := range ix.Writes(t) {
				st.set = int32(w.Value)
			}
			if st.opt && st.set < 0 {
				continue // taking it or not changes nothing: left out
			}
			if st.produces() {
				rem[st.set]++
				s.total[st.set]++
			}
			steps = append(steps, st)
		}
		if len(steps) == 0 {
			continue
		}
		s.sess = append(s.sess, steps)
		s.rem = append(s.rem, rem)
		s.left += len(steps)
		longest = max(longest, len(steps))
	}
	s.pos = make([]int32, len(s.sess))
	s.countArrivals()
	s.wide = longest >= 1<<16
	return s
}

// advance takes or leaves out session i's next step.
func (s *searcher) advance(i int32, take bool) {
	st := s.sess[i][s.pos[i]]
	s.pos[i]++
	s.left--
	if st.produces() {
		s.total[st.set]--
		s.rem[i][st.set]--
	}
	e := i * 2
	if take {
		s.order = append(s.order, st.txn)
		if st.set >= 0 {
			s.cur = st.set
		}
		e++
	}
	s.trail = append(s.trail, e)
}

// undo reverts the advances after mark and restores the current value.
func (s *searcher) undo(mark int, cur int32) {
	for len(s.trail) > mark {
		e := s.trail[len(s.trail)-1]
		s.trail = s.trail[:len(s.trail)-1]
		i := e / 2
		s.pos[i]--
		s.left++
		st := s.sess[i][s.pos[i]]
		if st.produces() {
			s.total[st.set]++
			s.rem[i][st.set]++
		}
		if e%2 == 1 {
			s.order = s.order[:len(s.order)-1]
		}
	}
	s.cur = cur
}

// close takes every free step (they leave the value as it is, so one pass
// does) and reports false when some session will need a value more often
// than the other sessions can still bring it (short).
func (s *searcher) close() bool {
	for i := range s.sess {
		for s.pos[i] < int32(len(s.sess[i])) && s.sess[i][s.pos[i]].free(s.cur) {
			s.advance(int32(i), true)
		}
	}
	if s.arrivals == nil {
		return true
	}
	for i := range s.sess {
		if s.short(i) {
			return false
		}
	}
	return true
}

// short reports whether session i's remaining steps need some value v to
// arrive more often than the other sessions have producers of v left.
// Between two steps of session i that are next to each other in it, the
// key changes to v only by another session's producer of v (a step that
// writes v without needing it), so each time the session needs v after
// knowing the key held something else, a distinct producer of v runs
// (their intervals are disjoint). arrivals counts those times from a
// position, the value there unknown; first adds the first need when the
// current value is known to differ.
func (s *searcher) short(i int) bool {
	p, nv := int(s.pos[i]), len(s.total)
	arr := s.arrivals[i][p*nv : (p+1)*nv]
	f := s.first[i][p]
	for v, n := range arr {
		if int32(v) == f && s.cur != f {
			n++
		}
		if n > s.total[v]-s.rem[i][v] {
			return true
		}
	}
	return false
}

// countArrivals fills arrivals and first (short) from the sessions' steps;
// it leaves them nil when the tables would be too large (many values), and
// the search then goes without the check.
func (s *searcher) countArrivals() {
	nv := len(s.total)
	if nv == 0 || (s.left+len(s.sess))*nv > 1<<24 {
		return
	}
	s.arrivals = make([][]int32, len(s.sess))
	s.first = make([][]int32, len(s.sess))
	for i, steps := range s.sess {
		n := len(steps)
		arr := make([]int32, (n+1)*nv)
		first := make([]int32, n+1)
		first[n] = -1
		for p := n - 1; p >= 0; p-- {
			st := steps[p]
			copy(arr[p*nv:(p+1)*nv], arr[(p+1)*nv:(p+2)*nv])
			switch {
			case st.opt: // taken or not: the value after it is unknown
				first[p] = -1
				continue
			case st.need < 0 && st.set < 0:
				first[p] = first[p+1]
				continue
			case st.need >= 0:
				first[p] = st.need
			default:
				first[p] = -1
			}
			after := st.set
			if after < 0 {
				after = st.need
			}
			if f := first[p+1]; f >= 0 && f != after {
				arr[p*nv+int(f)]++
			}
		}
		s.arrivals[i], s.first[i] = arr, first
	}
}

// stateKey writes the state into s.key.
func (s *searcher) stateKey() []byte {
	b := s.key[:0]
	for _, p := range s.pos {
		if s.wide {
			b = binary.LittleEndian.AppendUint32(b, uint32(p))
		} else {
			b = binary.LittleEndian.AppendUint16(b, uint16(p))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(s.cur))
	s.key = b
	return b
}

// deadChunk is how many dead states are budgeted at once.
const deadChunk = 1 << 16

// remember records the current state as a dead end; false when the
// budget has no room for it.
func (s *searcher) remember(k []byte) bool {
	n := int64(len(s.dead))
	if n >= s.maxDead {
		s.stop = errBudget
		return false
	}
	if n%deadChunk == 0 && s.fit != nil {
		per := int64(len(k)) + 64 // the key, its string header, the map's slot
		if err := s.fit(deadChunk*per, fmt.Sprintf("the value-sequence search's dead ends (%d so far)", n)); err != nil {
			s.stop = err
			return false
		}
	}
	s.dead[string(k)] = struct{}{}
	return true
}

// dfs reports whether the sessions can finish from the current state; on
// false the state is as it was.
func (s *searcher) dfs() bool {
	mark, cur := len(s.trail), s.cur
	if !s.close() {
		s.undo(mark, cur)
		return false
	}
	if s.left == 0 {
		return true
	}
	k := s.stateKey()
	if _, ok := s.dead[string(k)]; ok {
		s.undo(mark, cur)
		return false
	}
	s.states++
	if s.states%1024 == 0 && s.ctx.Err() != nil {
		s.stop = s.ctx.Err()
	}
	if s.stop != nil {
		s.undo(mark, cur)
		return false
	}
	for len(s.moves) <= s.depth {
		s.moves = append(s.moves, nil)
	}
	ms := s.branch(s.moves[s.depth][:0])
	s.moves[s.depth] = ms
	s.depth++
	for _, m := range ms {
		m2, c2 := len(s.trail), s.cur
		s.advance(m.s, m.take)
		if s.dfs() {
			s.depth--
			return true
		}
		s.undo(m2, c2)
		if s.stop != nil {
			break
		}
	}
	s.depth--
	if s.stop == nil {
		s.remember(s.stateKey())
	}
	s.undo(mark, cur)
	return false
}

// branch lists the moves from the current (closed) state, the most
// promising first: a read-modify-write that reads the current value before
// any blind write (it can only run now, or after another write of the
// value), then the session furthest behind (a recorded execution moved
// its sessions along together; a session left behind finds the values it
// needs gone: on the 3,000-transaction history of docs/valueseq.md this
// order takes 38k states where preferring the write that lets most
// sessions go on took 3.3M), then writes after which more sessions can go
// on; leaving out an optional writer last.
func (s *searcher) branch(ms []move) []move {
	for i := range s.sess {
		p := s.pos[i]
		if p == int32(len(s.sess[i])) {
			continue
		}
		st := s.sess[i][p]
		if st.need < 0 || st.need == s.cur {
			gain := int32(0)
			for j := range s.sess {
				q := s.pos[j]
				if j == i {
					q++
				}
				if q < int32(len(s.sess[j])) && s.sess[j][q].need == st.set {
					gain++
				}
			}
			kind := int32(1)
			if st.need >= 0 {
				kind = 0
			}
			ms = append(ms, move{s: int32(i), take: true, rank: [3]int32{kind, p - int32(len(s.sess[i])), -gain}})
		}
		if st.opt {
			ms = append(ms, move{s: int32(i), rank: [3]int32{2, 0, 0}})
		}
	}
	slices.SortStableFunc(ms, func(a, b move) int {
		for k := range a.rank {
			if c := cmp.Compare(a.rank[k], b.rank[k]); c != 0 {
				return c
			}
		}
		return 0
	})
	return ms
}
