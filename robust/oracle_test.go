package robust

// A brute-force oracle for robustness, written from MixIso's definitions
// and sharing no code with the static analysis: it enumerates every
// abstract execution (AR a total order, VIS any subset of AR) of a tiny
// workload, keeps those whose transactions satisfy their levels' axioms
// (Figure 3, Table 2), and asks whether one has a cyclic dependency graph
// (Definition 6.1) with session order added. Values are left free: a
// workload fixes no values, so for any (VIS, AR) some choice of values
// makes EXT hold, and INT holds by construction.

import (
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// otx is one transaction of the oracle: key sets as bit masks, and its
// session (-1: none) and position there.
type otx struct {
	reads, writes uint8
	level         history.Level
	sess, idx     int
}

// oexec is an execution the oracle found: the arbitration order and, per
// transaction and key it reads, the transaction it reads from (-1: T⊥).
type oexec struct {
	order    []int
	readFrom [][]int // [reader][key]
	vis      [][]bool
}

func (e *oexec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "AR %v; VIS", e.order)
	for a := range e.vis {
		for c := range e.vis[a] {
			if e.vis[a][c] {
				fmt.Fprintf(&b, " %d→%d", a, c)
			}
		}
	}
	fmt.Fprintf(&b, "; reads-from %v", e.readFrom)
	return b.String()
}

// axioms per level, from Table 2: which of TRANSVis, PREFIX, NoConflict,
// TOTALVis hold on top of RA's INT, EXT and SESSION.
type oaxioms struct{ transVis, prefix, noConflict, totalVis bool }

func axiomsOf(l history.Level) oaxioms {
	switch l {
	case history.RA:
		return oaxioms{}
	case history.CC:
		return oaxioms{transVis: true}
	case history.PC:
		return oaxioms{prefix: true}
	case history.PSI:
		return oaxioms{transVis: true, noConflict: true}
	case history.SI:
		return oaxioms{prefix: true, noConflict: true}
	case history.SER:
		return oaxioms{totalVis: true}
	}
	panic("oracle: level " + l.String())
}

// oracleBad returns an execution consistent with every transaction's
// level whose dependency graph plus session order has a cycle, if any.
func oracleBad(txs []otx, nkeys int) (*oexec, bool) {
	n := len(txs)
	ax := make([]oaxioms, n)
	for i, t := range txs {
		ax[i] = axiomsOf(t.level)
	}
	so := func(a, b int) bool {
		return txs[a].sess >= 0 && txs[a].sess == txs[b].sess && txs[a].idx < txs[b].idx
	}
	var found *oexec
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	pos := make([]int, n)
	vis := make([][]bool, n)
	for i := range vis {
		vis[i] = make([]bool, n)
	}
	var pairs [][2]int
	permute(perm, 0, func(order []int) bool {
		for p, t := range order {
			pos[t] = p
		}
		for a := range n {
			for b := range n {
				if so(a, b) && pos[a] > pos[b] {
					return true // SESSION needs SO ⊆ VIS ⊆ AR
				}
			}
		}
		pairs = pairs[:0]
		for i := range n {
			for j := i + 1; j < n; j++ {
				pairs = append(pairs, [2]int{order[i], order[j]})
			}
		}
		ar := func(a, b int) bool { return pos[a] < pos[b] }
		for mask := 0; mask < 1<<len(pairs); mask++ {
			for a := range n {
				clear(vis[a])
			}
			for i, pr := range pairs {
				if mask&(1<<i) != 0 {
					vis[pr[0]][pr[1]] = true
				}
			}
			if !consistent(txs, ax, vis, ar, so) {
				continue
			}
			rf, cyclic := ddgCyclic(txs, nkeys, vis, ar, so)
			if cyclic {
				e := &oexec{order: append([]int(nil), order...), readFrom: rf}
				for a := range n {
					e.vis = append(e.vis, append([]bool(nil), vis[a]...))
				}
				found = e
				return false
			}
		}
		return true
	})
	return found, found != nil
}

func permute(a []int, k int, f func([]int) bool) bool {
	if k == len(a) {
		return f(a)
	}
	for i := k; i < len(a); i++ {
		a[k], a[i] = a[i], a[k]
		if !permute(a, k+1, f) {
			a[k], a[i] = a[i], a[k]
			return false
		}
		a[k], a[i] = a[i], a[k]
	}
	return true
}

// consistent checks SESSION and each transaction's level axioms.
func consistent(txs []otx, ax []oaxioms, vis [][]bool, ar func(a, b int) bool, so func(a, b int) bool) bool {
	n := len(txs)
	for t := range n {
		for u := range n {
			if u == t {
				continue
			}
			if so(u, t) && !vis[u][t] {
				return false // SESSION
			}
			if ax[t].totalVis && ar(u, t) && !vis[u][t] {
				return false
			}
			if ax[t].noConflict && txs[u].writes&txs[t].writes != 0 && ar(u, t) && !vis[u][t] {
				return false
			}
			for s := range n {
				if s == t || s == u || !vis[s][t] {
					continue
				}
				if ax[t].transVis && vis[u][s] && !vis[u][t] {
					return false
				}
				if ax[t].prefix && ar(u, s) && !vis[u][t] {
					return false
				}
			}
		}
	}
	return true
}

// ddgCyclic computes reads-from (EXT: the AR-last visible writer, else T⊥)
// and reports whether SO ∪ WR ∪ WW ∪ RW has a cycle.
func ddgCyclic(txs []otx, nkeys int, vis [][]bool, ar func(a, b int) bool, so func(a, b int) bool) ([][]int, bool) {
	n := len(txs)
	edge := make([][]bool, n)
	for i := range edge {
		edge[i] = make([]bool, n)
	}
	rf := make([][]int, n)
	for t := range n {
		rf[t] = make([]int, nkeys)
		for x := range nkeys {
			rf[t][x] = -2 // not read
			if txs[t].reads&(1<<x) == 0 {
				continue
			}
			from := -1
			for u := range n {
				if vis[u][t] && txs[u].writes&(1<<x) != 0 && (from < 0 || ar(from, u)) {
					from = u
				}
			}
			rf[t][x] = from
			if from >= 0 {
				edge[from][t] = true // WR
			}
			for u := range n { // RW: u overwrites what t read
				if u != t && txs[u].writes&(1<<x) != 0 && (from < 0 || ar(from, u)) {
					edge[t][u] = true
				}
			}
		}
	}
	for a := range n {
		for b := range n {
			if a == b {
				continue
			}
			if so(a, b) || (txs[a].writes&txs[b].writes != 0 && ar(a, b)) {
				edge[a][b] = true // SO, WW
			}
		}
	}
	// Transitive closure; a cycle puts some node on its own closure.
	for k := range n {
		for a := range n {
			if !edge[a][k] {
				continue
			}
			for b := range n {
				if edge[k][b] {
					edge[a][b] = true
				}
			}
		}
	}
	for a := range n {
		if edge[a][a] {
			return rf, true
		}
	}
	return rf, false
}
