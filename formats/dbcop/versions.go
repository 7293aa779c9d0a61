package dbcop

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

// The warnings about versions (§2.5: duplicate writes, writes of 0,
// aborted and thin-air reads) are found after reading, from the History,
// so that reading never needs a value back from the builder and the
// builder can intern values on two cores. The events are walked again in
// file order, as reading met them: kept transactions are the History's,
// in order, each event an operation at 18 bytes from the last; the
// irregular ones (failed events, dropped transactions) were noted while
// reading; the versions of failed and dropped writes are the History's
// aborted writes, in order.
//
// What the walks keep about a version is a byte of flags, so that the
// cache misses on them are few. Where a version was first written is not
// kept but found by another walk for the few duplicate writes reported;
// whether a read's transaction wrote the version itself is found among
// its earlier operations (ownWrite). The reads no committed write
// explains are reported by a last walk, once every write is known.

// Flags of a version.
const (
	wWritten   uint8 = 1 << iota // successfully written
	wCommitted                   // successfully written by a committed transaction
	wAborted                     // written by an aborted transaction or a failed write
	wDup                         // reported as written twice
	wZero                        // the value is 0
)

// What a walk does.
type walkMode uint8

const (
	walkWrites walkMode = iota // note writes: flags, duplicate writes, writes of 0
	walkFirsts                 // find where the duplicated versions were first written
	walkReads                  // report the reads no committed write explains
)

// versionWalk is the state of the walks: the flags of every version, all
// in one array, key k's values from at[k] on.
type versionWalk struct {
	p       *parser
	h       *history.History
	mode    walkMode
	at      []int
	vers    []uint8
	aborted int // next of h.AbortedWrites
	sink    uint8
	// dups are the duplicate write warnings kept; firsts, where each of
	// their versions was first written successfully (1 + offset).
	dups   []dupWrite
	firsts map[history.Version]int64
	// own is the versions written by ownOps[:ownAt], the operations of a
	// long transaction (ownWrite).
	own    map[history.Version]bool
	ownOps *history.Op
	ownAt  int
}

// dupWrite is a kept duplicate write warning, list[at] of the warner,
// whose message waits for where ver was first written.
type dupWrite struct {
	at  int
	ver history.Version
}

func (v *versionWalk) of(ver history.Version) *uint8 {
	return &v.vers[v.at[ver.Key]+int(ver.Value)]
}

// versions walks every event of h to warn about duplicate writes and
// writes of 0 as reading did, and returns the walk, for reads once the
// warnings of the end of the input are given.
func (p *parser) versions(h *history.History) *versionWalk {
	v := &versionWalk{p: p, h: h, at: make([]int, len(h.Keys))}
	n := 0
	for k, vals := range h.Values {
		v.at[k] = n
		n += len(vals)
	}
	v.vers = make([]uint8, n)
	for k, vals := range h.Values {
		for i, x := range vals {
			if x == 0 {
				v.vers[v.at[k]+i] = wZero
			}
		}
	}
	v.walk(walkWrites)
	if len(v.dups) > 0 {
		v.firsts = map[history.Version]int64{}
		for _, d := range v.dups {
			v.firsts[d.ver] = 0
		}
		v.walk(walkFirsts)
		for _, d := range v.dups {
			p.w.list[d.at].w.Msg = fmt.Sprintf("write of (key %d, value %d) repeats the write at byte %d (dbcop requires unique values)",
				h.Keys[d.ver.Key], h.Value(d.ver.Key, d.ver.Value), v.firsts[d.ver]-1)
		}
	}
	return v
}

// reads warns, once every write is known, about the reads that no
// committed write explains.
func (v *versionWalk) reads() { v.walk(walkReads) }

// walk walks every event in file order.
func (v *versionWalk) walk(mode walkMode) {
	p, h := v.p, v.h
	v.mode, v.aborted, v.own, v.ownOps = mode, 0, nil, nil
	irr := p.irregular
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for len(irr) > 0 && irr[0].id < tx.ID {
			v.irregular(&irr[0], nil)
			irr = irr[1:]
		}
		if len(irr) > 0 && irr[0].id == tx.ID {
			v.irregular(&irr[0], tx.Ops)
			irr = irr[1:]
			continue
		}
		if mode == walkWrites {
			p.w.stage = 2*tx.ID + 1
		}
		committed := tx.Status == history.Committed
		// The versions' flags, loaded ahead: see history.Builder.AddRaw.
		for _, op := range tx.Ops {
			v.sink += *v.of(history.Version{Key: op.Key, Value: op.Value})
		}
		for i := range tx.Ops {
			v.kept(tx.Ops, i, tx.Pos.Offset+8+int64(i)*eventSize, committed)
		}
	}
	for i := range irr {
		v.irregular(&irr[i], nil)
	}
}

// irregular walks the events of ir, whose kept ones are ops (none if it
// was dropped).
func (v *versionWalk) irregular(ir *irregular, ops []history.Op) {
	if v.mode == walkWrites {
		v.p.w.stage = 2*ir.id + 1
	}
	j := 0 // next of ops
	for i, f := range ir.evs {
		off := ir.start + 8 + int64(i)*eventSize
		switch {
		case f&evOK != 0 && !ir.dropped:
			v.kept(ops, j, off, ir.committed)
			j++
		case f&evWrite == 0:
			// A failed read, or a read of a dropped transaction.
		default:
			// A failed write, or a write of a dropped transaction: an
			// aborted write.
			ver := v.h.AbortedWrites[v.aborted]
			v.aborted++
			v.write(ver, off, f&evOK != 0, ir.committed)
		}
	}
}

// kept walks ops[i], a successful event of a kept transaction whose
// operations are ops.
func (v *versionWalk) kept(ops []history.Op, i int, off int64, committed bool) {
	op := ops[i]
	ver := history.Version{Key: op.Key, Value: op.Value}
	if op.Kind == history.OpWrite {
		v.write(ver, off, true, committed)
		if v.mode == walkWrites && *v.of(ver)&wZero != 0 {
			v.p.w.add(kindZeroWrite, v.p.pos(off), "write of value 0 to key %d collides with the initial value", v.h.Keys[op.Key])
		}
		return
	}
	if v.mode != walkReads {
		return
	}
	// Reads of 0 see the initial state; a read of the transaction's own
	// earlier write is internal.
	if fl := *v.of(ver); fl&(wZero|wCommitted) == 0 && !v.ownWrite(ops, i) {
		key, value := v.h.Keys[ver.Key], v.h.Value(ver.Key, ver.Value)
		if fl&wAborted != 0 {
			v.p.w.add(kindAbortedRead, v.p.pos(off), "read of (key %d, value %d) sees a value only aborted or failed writes wrote (aborted read)", key, value)
		} else {
			v.p.w.add(kindThinAir, v.p.pos(off), "read of (key %d, value %d) sees a value nothing wrote (thin-air read)", key, value)
		}
	}
}

// ownLimit is how many operations a transaction has at most for
// ownWrite to look through them; a variable so that tests can lower it.
var ownLimit = 64

// ownWrite reports whether one of ops[:i] writes the version ops[i] reads:
// whether the last successful write of that version, as reading met the
// events, was by this transaction (the others' events all come before
// or after its own). The operations are looked through, or, in a long
// transaction, v.own, filled as its writes are walked.
func (v *versionWalk) ownWrite(ops []history.Op, i int) bool {
	r := ops[i]
	if len(ops) > ownLimit {
		if v.own == nil || v.ownOps != &ops[0] {
			v.own, v.ownOps, v.ownAt = map[history.Version]bool{}, &ops[0], 0
		}
		for ; v.ownAt < i; v.ownAt++ {
			if w := ops[v.ownAt]; w.Kind == history.OpWrite {
				v.own[history.Version{Key: w.Key, Value: w.Value}] = true
			}
		}
		return v.own[history.Version{Key: r.Key, Value: r.Value}]
	}
	for _, w := range ops[:i] {
		if w.Kind == history.OpWrite && w.Key == r.Key && w.Value == r.Value {
			return true
		}
	}
	return false
}

// write walks a write of ver at off: success says whether the event
// succeeded, committed whether its transaction did. A successful write
// that repeats an earlier successful one is reported.
func (v *versionWalk) write(ver history.Version, off int64, success, committed bool) {
	switch v.mode {
	case walkFirsts:
		if first, ok := v.firsts[ver]; ok && first == 0 && success {
			v.firsts[ver] = off + 1
		}
		return
	case walkReads:
		return
	}
	fl := v.of(ver)
	if success {
		if *fl&(wWritten|wDup) == wWritten {
			// Reported once per (key, value), at its second write.
			*fl |= wDup
			if at := v.p.w.addLater(kindDupWrite, v.p.pos(off)); at >= 0 {
				v.dups = append(v.dups, dupWrite{at, ver})
			}
		}
		*fl |= wWritten
	}
	if success && committed {
		*fl |= wCommitted
	} else {
		*fl |= wAborted
	}
}
