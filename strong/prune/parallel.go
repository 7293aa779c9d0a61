package prune

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/hyperiso/hyperiso/history"
)

// Within one pass the keys' version orders are decided independently:
// a pair of key x is tested against the reachability of the pass (fixed
// until the next fill), the known readers of x and x's own known version
// order, and what it decides (applyWW) is read by no other key's test.
// So passWW splits the keys in two runs of about equal pairs and decides
// them on two goroutines, each with its own keyScratch, and applies what
// they decided in key order: the known edges, their order in g.Known, the
// pairs kept and the conflict reported are the sequential pass's. Only a
// stop (a conflict, the budget, the context) in the first run differs: on
// a listed graph the second run's decisions, being sound, are kept too.

// parallelPairs is the number of pairs from which passWW uses a second
// goroutine; a variable so that tests can make it small.
var parallelPairs int64 = 1 << 20

// keyTask is the pairs of one key: g.WW[lo:hi] when listed, else the
// key's pending pairs (pairs of them).
type keyTask struct {
	x      history.KeyID
	lo, hi int32
	pairs  int64
}

// keyTasks lists the keys with pairs to decide, in key order.
func (p *pruner) keyTasks(lazy bool) []keyTask {
	g := p.g
	var tasks []keyTask
	if lazy {
		for x := g.PendingFrom; int(x) < len(g.Writers); x++ {
			n := int64(len(g.Writers[x]))
			if n > 0 && g.Writers[x][0] == history.InitTxn {
				n-- // T⊥ orders its writes: they make no pair
			}
			if n >= 2 {
				tasks = append(tasks, keyTask{x: x, lo: -1, hi: -1, pairs: n * (n - 1) / 2})
			}
		}
		return tasks
	}
	for lo := 0; lo < len(g.WW); {
		x := g.WW[lo].Key
		hi := lo + 1
		for hi < len(g.WW) && g.WW[hi].Key == x {
			hi++
		}
		tasks = append(tasks, keyTask{x: x, lo: int32(lo), hi: int32(hi), pairs: int64(hi - lo)})
		lo = hi
	}
	return tasks
}

// taskRun is what one goroutine's run of tasks did: next is the first
// task it did not finish (len(tasks) when it finished all), out its
// kept pairs end (listed: g.WW[start:out] holds them).
type taskRun struct {
	changed bool
	c       *Conflict
	err     error
	next    int
	out     int
}

// decideTasks decides the tasks' pairs, on two goroutines when they are
// many, applies what was decided and leaves the undecided pairs in g.WW
// (and, lazy, the keys not reached pending).
func (p *pruner) decideTasks(ctx context.Context, tasks []keyTask, lazy bool) (changed bool, c *Conflict, err error) {
	g := p.g
	var total int64
	for _, t := range tasks {
		total += t.pairs
	}
	split := len(tasks)
	if runtime.GOMAXPROCS(0) > 1 && total >= parallelPairs {
		half, sum := total/2, int64(0)
		for i, t := range tasks {
			if sum += t.pairs; sum >= half {
				split = i + 1
				break
			}
		}
	}
	first, second := tasks[:split], tasks[split:]
	// Listed, the second run's pairs begin at start2 in g.WW.
	start2 := len(g.WW)
	if !lazy && len(second) > 0 {
		start2 = int(second[0].lo)
	}
	var r2 taskRun
	var w *pruner
	var wg sync.WaitGroup
	fit := p.fit
	if len(second) > 0 {
		w = p.worker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r2 = w.runTasks(ctx, second, lazy, start2)
		}()
	}
	r1 := p.runTasks(ctx, first, lazy, 0)
	wg.Wait()
	if w != nil {
		p.fit = fit
	}
	// The first run's decisions are known already; the second's join
	// them unless the first stopped on a lazy graph, whose keys not
	// reached must stay a suffix.
	keep2 := w != nil && !(lazy && (r1.c != nil || r1.err != nil))
	changed, c, err = r1.changed, r1.c, r1.err
	if keep2 {
		changed = changed || r2.changed
		if c == nil && err == nil {
			c, err = r2.c, r2.err
		}
	}
	if lazy {
		kept := p.out.kept
		next := r1.next
		if keep2 {
			var gerr error
			if kept, gerr = growFit(p, kept, len(w.out.kept), "pruning's undecided version-order pairs"); gerr != nil {
				// The second run's keys stay pending, as if not reached.
				keep2, changed, c, err = false, r1.changed, r1.c, gerr
			} else {
				kept = append(kept, w.out.kept...)
				next = split + r2.next
			}
		}
		g.WW = kept
		if next < len(tasks) {
			g.PendingFrom = tasks[next].x
		} else {
			g.Pending, g.PendingFrom = false, 0
		}
		p.out.kept = nil
	} else {
		// Listed: each run compacted its kept pairs to the front of its
		// part of g.WW; the parts not reached follow them.
		end := len(g.WW)
		n := r1.out
		n += copy(g.WW[n:], g.WW[lo(tasks, r1.next, start2):start2])
		if w != nil {
			n += copy(g.WW[n:], g.WW[start2:r2.out])
			n += copy(g.WW[n:], g.WW[lo(second, r2.next, end):end])
		}
		clear(g.WW[n:])
		g.WW = g.WW[:n]
	}
	if keep2 {
		if aerr := p.applyWW(&w.out); aerr != nil {
			return changed, nil, aerr
		}
	}
	if len(g.WW) < cap(g.WW)/4 {
		// Most pairs are decided in the first pass: let the rest of the
		// check do without the room they took.
		g.WW = slices.Clip(slices.Clone(g.WW))
	}
	return changed, c, err
}

// lo is where task i's pairs begin in g.WW, or end past the last task.
func lo(tasks []keyTask, i, end int) int {
	if i < len(tasks) {
		return int(tasks[i].lo)
	}
	return end
}

// worker is a pruner for a second goroutine of passWW: it shares p's
// graph and reachability, which it only reads, and has its own
// keyScratch. From now on p and it ask the budget through one lock;
// decideTasks gives p its own function back.
func (p *pruner) worker() *pruner {
	var mu sync.Mutex
	fit := p.fit
	p.fit = func(need int64, what string) error {
		mu.Lock()
		defer mu.Unlock()
		return fit(need, what)
	}
	w := *p
	// Its own header of the graph: p appends to g.Known (beyond what w
	// reads) while it runs.
	g := *p.g
	w.g = &g
	w.buffered = true
	w.keyScratch = keyScratch{rdKey: -1}
	w.rdHead = make([]int32, p.g.N())
	w.rdStamp = make([]int32, p.g.N())
	return &w
}

// runTasks decides the tasks in order. On a listed graph the undecided
// pairs are compacted in place from g.WW[start:]; lazy, they join
// p.out.kept. It stops at a conflict, a budget refusal or ctx.
func (p *pruner) runTasks(ctx context.Context, tasks []keyTask, lazy bool, start int) (r taskRun) {
	g := p.g
	tested := 0
	r.out = start
	for i, t := range tasks {
		if lazy {
			// Room for keeping all the key's pairs, asked first: once
			// decided, the undecided pairs must find a place.
			var err error
			if p.out.kept, err = growFit(p, p.out.kept, int(t.pairs), "pruning's undecided version-order pairs"); err != nil {
				r.err, r.next = err, i
				return r
			}
			ch, c, err := p.decideAllPairs(ctx, t.x, &tested)
			r.changed = r.changed || ch
			if err != nil || c != nil {
				r.c, r.err, r.next = c, err, i+1
				return r
			}
			continue
		}
		pairs := g.WW[t.lo:t.hi]
		ch, c, err := p.decideKey(ctx, t.x, pairs, &tested)
		r.changed = r.changed || ch
		for j, pr := range pairs {
			if !p.dropPair[j] {
				g.WW[r.out] = pr
				r.out++
			}
		}
		if err != nil || c != nil {
			r.c, r.err, r.next = c, err, i+1
			return r
		}
	}
	r.next = len(tasks)
	return r
}
