package dbcop

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

// The warnings about versions (§2.5: duplicate writes, writes of 0,
// aborted and thin-air reads) are found after reading, from the History,
// so that reading never needs a value back from the builder and the
// builder can intern values on two cores. versions walks the events in
// file order again, as reading met them: kept transactions are the
// History's, in order, each event an operation at 18 bytes from the last;
// the irregular ones (failed events, dropped transactions) were noted
// while reading; the versions of failed and dropped writes are the
// History's aborted writes, in order.

// written records what is known about one version. 8 bytes: the walk's
// cache misses are on these, so where a version was first written is
// not kept but found again for the few duplicate writes reported
// (firsts).
type written struct {
	// lastTxn is the last transaction that wrote it successfully, 0 if
	// none or if that one was dropped (DropAborted): only a kept
	// transaction's reads ask whether it wrote the version itself.
	lastTxn history.TxnID
	flags   uint8
}

const (
	wWritten   uint8 = 1 << iota // successfully written
	wCommitted                   // successfully written by a committed transaction
	wAborted                     // written by an aborted transaction or a failed write
	wDup                         // reported as written twice
	wZero                        // the value is 0
)

// pendingRead is a successful read of a non-zero value, checked against
// all writes once every event is walked.
type pendingRead struct {
	off int64
	ver history.Version
}

// versionWalk is the state of versions: a record per version, all in one
// array, key k's values from at[k] on.
type versionWalk struct {
	p       *parser
	h       *history.History
	at      []int
	vers    []written
	aborted int // next of h.AbortedWrites
	sink    uint8
	reads   []pendingRead
	dups    []dupWrite
	// firsts, while the events are walked again, is where each version
	// of a kept duplicate write warning was first written successfully
	// (1 + offset, 0 until found).
	firsts map[history.Version]int64
}

// dupWrite is a kept duplicate write warning, list[at] of the warner,
// whose message waits for where ver was first written.
type dupWrite struct {
	at  int
	ver history.Version
}

func (v *versionWalk) of(ver history.Version) *written {
	return &v.vers[v.at[ver.Key]+int(ver.Value)]
}

// versions walks every event of h in file order, warns about duplicate
// writes and writes of 0 as reading did, and returns the reads to check
// once all writes are known.
func (p *parser) versions(h *history.History) *versionWalk {
	v := &versionWalk{p: p, h: h, at: make([]int, len(h.Keys))}
	n := 0
	for k, vals := range h.Values {
		v.at[k] = n
		n += len(vals)
	}
	v.vers = make([]written, n)
	for k, vals := range h.Values {
		for i, x := range vals {
			if x == 0 {
				v.vers[v.at[k]+i].flags = wZero
			}
		}
	}
	v.walk()
	if len(v.dups) > 0 {
		v.firsts = map[history.Version]int64{}
		for _, d := range v.dups {
			v.firsts[d.ver] = 0
		}
		v.aborted = 0
		v.walk()
		for _, d := range v.dups {
			p.w.list[d.at].w.Msg = fmt.Sprintf("write of (key %d, value %d) repeats the write at byte %d (dbcop requires unique values)",
				h.Keys[d.ver.Key], h.Value(d.ver.Key, d.ver.Value), v.firsts[d.ver]-1)
		}
	}
	return v
}

// walk walks every event in file order.
func (v *versionWalk) walk() {
	p, h := v.p, v.h
	irr := p.irregular
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for len(irr) > 0 && irr[0].id < tx.ID {
			v.irregular(&irr[0], 0, nil)
			irr = irr[1:]
		}
		if len(irr) > 0 && irr[0].id == tx.ID {
			v.irregular(&irr[0], history.TxnID(t), tx.Ops)
			irr = irr[1:]
			continue
		}
		p.w.stage = 2*tx.ID + 1
		committed := tx.Status == history.Committed
		// The versions' records, loaded ahead: see history.Builder.AddRaw.
		for _, op := range tx.Ops {
			v.sink += v.of(history.Version{Key: op.Key, Value: op.Value}).flags
		}
		for i, op := range tx.Ops {
			v.kept(op, tx.Pos.Offset+8+int64(i)*eventSize, history.TxnID(t), committed)
		}
	}
	for i := range irr {
		v.irregular(&irr[i], 0, nil)
	}
}

// irregular walks the events of ir, transaction t (0 if dropped), whose
// kept ones are ops.
func (v *versionWalk) irregular(ir *irregular, t history.TxnID, ops []history.Op) {
	v.p.w.stage = 2*ir.id + 1
	for i, f := range ir.evs {
		off := ir.start + 8 + int64(i)*eventSize
		switch {
		case f&evOK != 0 && !ir.dropped:
			v.kept(ops[0], off, t, ir.committed)
			ops = ops[1:]
		case f&evWrite == 0:
			// A failed read, or a read of a dropped transaction.
		default:
			// A failed write, or a write of a dropped transaction: an
			// aborted write.
			ver := v.h.AbortedWrites[v.aborted]
			v.aborted++
			v.note(ver, off, t, f&evOK != 0, ir.committed)
		}
	}
}

// kept walks op, a successful event of kept transaction t.
func (v *versionWalk) kept(op history.Op, off int64, t history.TxnID, committed bool) {
	ver := history.Version{Key: op.Key, Value: op.Value}
	if op.Kind == history.OpWrite {
		w := v.note(ver, off, t, true, committed)
		if w != nil && w.flags&wZero != 0 {
			v.p.w.add(kindZeroWrite, v.p.pos(off), "write of value 0 to key %d collides with the initial value", v.h.Keys[op.Key])
		}
	} else if w := v.of(ver); v.firsts == nil && w.flags&(wZero|wCommitted) == 0 && w.lastTxn != t {
		// Reads of 0 see the initial state; a read of the transaction's
		// own earlier write is internal; a committed write explains a
		// read, whatever comes later.
		v.reads = append(v.reads, pendingRead{off, ver})
	}
}

// note records a write of ver at off by transaction t (0: dropped):
// success says whether the event succeeded, committed whether its
// transaction did. A successful write that repeats an earlier successful
// one is reported.
func (v *versionWalk) note(ver history.Version, off int64, t history.TxnID, success, committed bool) *written {
	if v.firsts != nil {
		if first, ok := v.firsts[ver]; ok && first == 0 && success {
			v.firsts[ver] = off + 1
		}
		return nil
	}
	w := v.of(ver)
	if success {
		w.lastTxn = t
		if w.flags&(wWritten|wDup) == wWritten {
			// Reported once per (key, value), at its second write.
			w.flags |= wDup
			if at := v.p.w.addLater(kindDupWrite, v.p.pos(off)); at >= 0 {
				v.dups = append(v.dups, dupWrite{at, ver})
			}
		}
		w.flags |= wWritten
	}
	if success && committed {
		w.flags |= wCommitted
	} else {
		w.flags |= wAborted
	}
	return w
}

// report warns about the reads that no committed write explains.
func (v *versionWalk) report(p *parser, h *history.History) {
	for _, r := range v.reads {
		w := v.of(r.ver)
		switch {
		case w.flags&wCommitted != 0:
		case w.flags&wAborted != 0:
			p.w.add(kindAbortedRead, p.pos(r.off), "read of (key %d, value %d) sees a value only aborted or failed writes wrote (aborted read)",
				h.Keys[r.ver.Key], h.Value(r.ver.Key, r.ver.Value))
		default:
			p.w.add(kindThinAir, p.pos(r.off), "read of (key %d, value %d) sees a value nothing wrote (thin-air read)",
				h.Keys[r.ver.Key], h.Value(r.ver.Key, r.ver.Value))
		}
	}
}
