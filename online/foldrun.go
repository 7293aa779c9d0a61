package online

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hyperiso/hyperiso/history"
)

// tryFold folds the window h (read from snap, every level not yet settled
// satisfied by it) at its latest cut that allows it, and says in
// Status.Keeping why it did not when it could not. Folding needs the
// promise of unique values kept, a fence key, registers with integer keys
// and values, the initial state "zero", no line other than transactions
// besides the header, and levels that fold (foldable).
func (c *Checker) tryFold(h *history.History, snap snapshot) {
	c.status.Keeping = ""
	keep := func(format string, args ...any) { c.status.Keeping = fmt.Sprintf(format, args...) }
	if c.opt.NoFold || c.fold.broken != "" {
		return
	}
	for _, lv := range c.status.Levels {
		if lv.Certain == nil && !foldable[lv.Level] {
			keep("%s does not fold (docs/online.md)", lv.Level)
			return
		}
	}
	fenceKey, ok := c.opt.FenceKey, c.opt.FenceKeySet
	if !ok {
		if s, has := h.Meta[FenceKeyMeta]; has {
			k, err := strconv.ParseInt(s, 10, 64)
			fenceKey, ok = k, err == nil
		}
	}
	switch {
	case !ok:
		keep("no fence key (collect --fence-every)")
		return
	case !c.opt.Unique || c.status.Broken != "":
		keep("values are not promised unique")
		return
	case c.opt.Lenient:
		keep("--lenient")
		return
	case h.HasRows() || len(h.Lists) > 0 || h.HasNames() || c.hasLists(h):
		keep("lists, rows or names")
		return
	case c.fold.txns == 0 && (c.others > 0 || !zeroInit(snap)):
		keep("an initial state or a line other than transactions")
		return
	}
	fi, ok := newFenceInfo(h, fenceKey)
	if !ok {
		keep("no fence yet")
		return
	}
	cuts := fi.cuts()
	if len(cuts) == 0 {
		keep("no cut yet: every session's fence, then its fence read")
		return
	}
	last := cuts[len(cuts)-1]
	var p *cutPlan
	var why string
	// The latest cut that folds: a later one leaves fewer keys written
	// again after it. A few are tried, back to the first.
	tried := map[int]bool{}
	for _, back := range []int{0, 1, 2, 4, 8, len(cuts) - 1} {
		r := max(len(cuts)-1-back, 0)
		if tried[r] {
			continue
		}
		tried[r] = true
		if p, why = fi.plan(cuts[r], last); p != nil {
			break
		}
	}
	if p == nil {
		keep("%s", why)
		return
	}
	c.fold.key = fenceKey
	c.apply(snap, h, p)
}

// newSessions checks, once the history was folded, that every session
// that came since begins after the fold (fenceInfo.newSessionsOK), and
// records it in FoldBroken otherwise.
func (c *Checker) newSessions(h *history.History) {
	if c.fold.known == nil || c.fold.broken != "" {
		return
	}
	fi, ok := newFenceInfo(h, c.fold.key)
	if !ok {
		c.fold.broken = "the fence key is gone"
		return
	}
	if why, ok := fi.newSessionsOK(c.fold.known); !ok {
		c.fold.broken = why
	}
}

// hasLists says whether h appends or reads lists.
func (c *Checker) hasLists(h *history.History) bool {
	for _, t := range h.Txns {
		for _, op := range t.Ops {
			if op.Kind == history.OpAppend || op.Kind == history.OpReadList {
				return true
			}
		}
	}
	return false
}

// zeroInit says whether the stream's header (if any) leaves the initial
// state "zero", and keeps the header for the folded windows.
func zeroInit(snap snapshot) bool {
	for i, ln := range snap.lines {
		if ln.kind == lineBlank {
			continue
		}
		if ln.kind != lineHeader {
			return true
		}
		end := len(snap.buf)
		if i+1 < len(snap.lines) {
			end = snap.lines[i+1].start
		}
		line := snap.buf[ln.start:end]
		zero := true
		topKeys(line, func(k []byte, after int) {
			if string(k) == "init" {
				var v struct {
					Init string `json:"init"`
				}
				zero = json.Unmarshal(line, &v) == nil && v.Init == "zero"
			}
		})
		return zero
	}
	return true
}

// apply replaces the window's lines up to snap by the folded window, and
// keeps the lines that came meanwhile after it.
func (c *Checker) apply(snap snapshot, h *history.History, p *cutPlan) {
	f := &c.fold
	if f.header == nil {
		f.header, f.headerNo = []byte(`{"hyperiso":1,"init":"zero"}`+"\n"), 1
		for i, ln := range snap.lines {
			if ln.kind == lineHeader {
				end := len(snap.buf)
				if i+1 < len(snap.lines) {
					end = snap.lines[i+1].start
				}
				f.header, f.headerNo = append([]byte(nil), snap.buf[ln.start:end]...), ln.no
			}
		}
		f.init = map[int64]int64{}
	}
	for k, v := range p.init {
		f.init[k] = v
	}
	buf, lines := f.window(snap, h, p)
	f.known = make(map[int64]bool, len(h.Sessions))
	for _, s := range h.Sessions {
		if len(s.Txns) > 0 { // one the header lists may begin anywhere
			f.known[s.ID] = true
		}
	}
	f.txns += p.n
	f.ops += p.ops
	f.cuts++
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ln := range c.lines[len(snap.lines):] {
		end := len(c.buf)
		if j := len(snap.lines) + i + 1; j < len(c.lines) {
			end = c.lines[j].start
		}
		line := c.buf[ln.start:end]
		if ln.kind == lineTxn && !ln.hasID {
			line, ln.hasID = withID(line, ln.ord), true
		}
		ln.start = len(buf)
		buf = append(buf, line...)
		lines = append(lines, ln)
	}
	c.buf = buf
	c.lines = lines
	c.folded = true
}

// endLine checks a folded stream's end line (at index i of snap's lines)
// against what was read: the window h and what was folded away.
func (c *Checker) endLine(snap snapshot, i int, h *history.History) error {
	ln := snap.lines[i]
	end := len(snap.buf)
	if i+1 < len(snap.lines) {
		end = snap.lines[i+1].start
	}
	var e struct {
		End struct {
			Transactions, Operations, Lines *int
		} `json:"end"`
	}
	if err := json.Unmarshal(snap.buf[ln.start:end], &e); err != nil {
		return fmt.Errorf("%s:%d: the end line: %v", c.opt.Name, ln.no, err)
	}
	ops := c.fold.ops
	for t := 1; t < len(h.Txns); t++ {
		ops += len(h.Txns[t].Ops)
	}
	c.mu.Lock()
	txns, lines := c.txns, c.counted
	c.mu.Unlock()
	for _, f := range []struct {
		name      string
		got, want *int
	}{{"transactions", e.End.Transactions, &txns}, {"operations", e.End.Operations, &ops}, {"lines", e.End.Lines, &lines}} {
		switch {
		case f.got == nil:
			return fmt.Errorf("%s:%d: the end line lacks %q", c.opt.Name, ln.no, f.name)
		case *f.got != *f.want:
			return fmt.Errorf("%s:%d: the end line counts %d %s, the stream has %d", c.opt.Name, ln.no, *f.got, f.name, *f.want)
		}
	}
	return nil
}
