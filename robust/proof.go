package robust

import "github.com/hyperiso/hyperiso/history"

// chainProof proves a set of instances (a component) robust without a
// SAT question, when its shape allows the argument below; it never
// refutes. It is how a component too large for one question gets a robust
// answer that the static criterion does not give (TPC-C's Order-Status at
// CC).
//
// Shape: no session order among the members; every member that writes is
// a closed writer (at a level with NoConflict and transitive visibility:
// PSI, SI, SER; and it writes every key it reads that another member
// writes); every member that writes nothing is an ordering reader: at a
// prefix level (PC, SI, SER), or reading one key that another member
// writes, or at CC or PSI with every two writers of its keys sharing a
// written key unless the only keys of its they write are one and the
// same.
//
// Argument, in any execution at the levels. An edge out of a closed
// writer a goes forward in AR, and to a closed writer b it is one b sees:
// wr and ww by definition and NoConflict; rw on x (which a writes): if b
// came first, a would see it and read x from b or later. A reader has rw
// edges out and wr edges in only. So a cycle is readers R1 … Rk joined by
// chains Xi ⇝ Yi of closed writers, Ri →rw Xi and Yi →wr Ri+1, with
// Xi ≤ Yi in AR. An ordering reader R (= Ri+1, Y = Yi, X = Xi+1) puts Y
// before X in AR: a prefix holds Y and not X; a single key read from Y is
// overwritten by X; at CC or PSI, if Y and X write one key of R's, R reads
// it from Y and X overwrites it, and otherwise they share a written key,
// so if X came first Y would see X (NoConflict) and R, seeing Y, would
// see X (transitivity) and read no version X overwrites. With ordering
// readers only, Y1 < X2 ≤ Y2 < … < X1 ≤ Y1 in AR: no cycle.
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
	for _, p := range g {
		inst := &w.Instances[p]
		if inst.Session >= 0 || inst.Patterned {
			return false
		}
		ax := axiomsFor(levels[p])
		prefix := ax.prefix || ax.totalVis
		if !inst.ReadOnly() {
			if !(ax.noConflict || ax.totalVis) || !(prefix || ax.transVis) {
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
		if !ax.transVis || !x.writersMeet(p, in) {
			return false
		}
	}
	return true
}

// writersMeet reports whether every two writers in the set of the keys
// reader r reads share a written key, unless the only keys of r's they
// write are one and the same.
func (x *index) writersMeet(r int32, in map[int32]bool) bool {
	w := x.w
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
