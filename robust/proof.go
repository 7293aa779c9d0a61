package robust

import "github.com/hyperiso/hyperiso/history"

// chainProof proves a component robust without a SAT question, when its
// shape allows the argument below; it never refutes. It is how a
// component too large for one question gets a robust answer that the
// static criterion does not give (TPC-C's Order-Status at CC).
//
// Shape: no session order among the members; every member that writes is
// a closed writer (at a level with NoConflict and transitive visibility:
// PSI, SI, SER; and it writes every key it reads that another member
// writes); every member that writes nothing is an ordering reader (at a
// prefix level, PC, SI or SER, or reading one key that another member
// writes), except at most one, R, at CC or PSI, every two writers of
// whose keys share a written key unless they write only one common key
// of R's.
//
// Argument, in any execution at the levels. An edge out of a closed
// writer a goes forward in AR, and to a closed writer b it is one b sees:
// wr and ww by definition and NoConflict; rw on x (which a writes): if b
// came first, a would see it and read x from b or later. A reader has rw
// edges out and wr edges in only. So a cycle is readers R1 … Rk joined by
// chains Xi ⇝ Yi of closed writers, Ri →rw Xi and Yi →wr Ri+1, and
// Xi ≤ Yi in AR. An ordering reader Ri+1 puts Yi before Xi+1 in AR (a
// prefix holds Yi and not Xi+1; a single key read from Yi is overwritten
// by Xi+1). With ordering readers only, AR would be cyclic. With R = R1:
// X1 ≤ … ≤ Yk in AR, and X1, Yk write keys R reads, so they share a
// written key (or write only one common key of R's, the one R reads from
// Yk and that X1 overwrites, so that Yk precedes X1); then Yk sees X1
// (NoConflict), R sees Yk, so R sees X1 (transitivity), and R cannot read
// a version X1 overwrites.
func (x *index) chainProof(levels []history.Level, g []int32) bool {
	w := x.w
	in := make(map[int32]bool, len(g))
	for _, p := range g {
		in[p] = true
	}
	writtenBy := func(k KeyID, not int32) bool {
		for _, q := range x.writers[k] {
			if q != not && in[q] {
				return true
			}
		}
		return false
	}
	r := int32(-1)
	for _, p := range g {
		inst := &w.Instances[p]
		if inst.Session >= 0 || inst.Patterned {
			return false
		}
		ax := axiomsFor(levels[p])
		prefix := ax.prefix || ax.totalVis
		if !inst.ReadOnly() {
			if !ax.noConflict || !(prefix || ax.transVis) {
				return false
			}
			for _, k := range inst.Reads {
				if !containsKey(inst.Writes, k) && writtenBy(k, p) {
					return false
				}
			}
			continue
		}
		if prefix || x.singleKeyReaderIn(p, in) {
			continue
		}
		if !ax.transVis || r >= 0 {
			return false
		}
		r = p
	}
	if r < 0 {
		return true
	}
	// Every two writers of R's keys share a written key, unless the keys
	// of R's they write are one and the same.
	var ws []int32
	var keysOf [][]KeyID
	for _, k := range w.Instances[r].Reads {
		for _, q := range x.writers[k] {
			if !in[q] {
				continue
			}
			j := -1
			for t, v := range ws {
				if v == q {
					j = t
				}
			}
			if j < 0 {
				ws, keysOf = append(ws, q), append(keysOf, nil)
				j = len(ws) - 1
			}
			keysOf[j] = append(keysOf[j], k)
		}
	}
	for a := range ws {
		for b := a + 1; b < len(ws); b++ {
			if len(keysOf[a]) == 1 && len(keysOf[b]) == 1 && keysOf[a][0] == keysOf[b][0] {
				continue
			}
			if !intersects(w.Instances[ws[a]].Writes, w.Instances[ws[b]].Writes) {
				return false
			}
		}
	}
	return true
}

// singleKeyReaderIn reports whether read-only instance p reads at most
// one key that another instance of the set writes.
func (x *index) singleKeyReaderIn(p int32, in map[int32]bool) bool {
	n := 0
	for _, k := range x.w.Instances[p].Reads {
		for _, q := range x.writers[k] {
			if q != p && in[q] {
				n++
				break
			}
		}
	}
	return n <= 1
}
