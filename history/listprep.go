package history

import (
	"fmt"
	"slices"
)

// What every explanation of a history's lists shares: the blocks, the list
// reads with their views, and who may have appended each version.

// undetermined marks, in a fate table, an unknown-status transaction
// whose fate is still open.
const undetermined Status = 255

// listRead is one list read of a non-aborted transaction.
type listRead struct {
	t   TxnID
	op  int32
	key KeyID
	// view is the list without the own suffix; nil with bad set when the
	// list does not end with the reader's own earlier appends.
	view []ValueID
	bad  bool
}

// listPrep is what every explanation shares.
type listPrep struct {
	h      *History
	isList []bool
	// blocks[t] lists t's blocks (non-aborted t), one per list key.
	blocks [][]txnBlock
	reads  []listRead
	// readsOf[t] indexes t's list reads in reads.
	readsOf [][]int32
	// appenders[ver] are the non-aborted transactions whose block holds
	// version ver, ascending, each once.
	base      []int32
	appenders [][]TxnID
	aborted   []bool // per version: appended by an aborted transaction
	// relevant marks the unknown transactions that append to or read a
	// list; needed those whose register writes some other transaction reads.
	relevant, needed []bool
	// writeKeys[t] are the keys t writes or appends to, each once.
	writeKeys [][]KeyID
	empty     []ValueID // per list key: the empty list's value, or -1
}

type txnBlock struct {
	key  KeyID
	vals []ValueID
}

func newListPrep(h *History) (*listPrep, error) {
	nk := len(h.Keys)
	p := &listPrep{h: h, isList: make([]bool, nk), blocks: make([][]txnBlock, len(h.Txns)),
		readsOf: make([][]int32, len(h.Txns)), relevant: make([]bool, len(h.Txns)), needed: make([]bool, len(h.Txns))}
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind == OpAppend || op.Kind == OpReadList {
				p.isList[op.Key] = true
			}
		}
	}
	p.empty = make([]ValueID, nk)
	for k := range nk {
		p.empty[k] = -1
		if p.isList[k] {
			for v, raw := range h.Values[k] {
				if raw == EmptyList {
					p.empty[k] = ValueID(v)
				}
			}
		}
	}
	// Versions numbered as Index.VerBase does, without building the
	// index of a history the engines never see.
	p.base = make([]int32, nk+1)
	for k := range nk {
		p.base[k+1] = p.base[k] + int32(len(h.Values[k]))
	}
	nv := p.base[nk]
	p.appenders = make([][]TxnID, nv)
	p.aborted = make([]bool, nv)
	for _, w := range h.AbortedWrites {
		p.aborted[p.base[w.Key]+int32(w.Value)] = true
	}
	regRead := map[int64]bool{} // raw (key id, value id) of register reads
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for i, op := range tx.Ops {
			k := op.Key
			if !p.isList[k] {
				if op.Kind == OpRead && tx.Status != Aborted {
					regRead[int64(k)<<32|int64(op.Value)] = true
				}
				continue
			}
			switch op.Kind {
			case OpWrite:
				return nil, fmt.Errorf("%s: %s writes key %s as a register, but the key is a list (appended to or read as a list)", tx.Pos, h.TxnString(TxnID(t)), h.KeyString(k))
			case OpRead:
				if h.Values[k][op.Value] != EmptyList {
					return nil, fmt.Errorf("%s: %s reads key %s as a register (value %s), but the key is a list (appended to or read as a list)", tx.Pos, h.TxnString(TxnID(t)), h.KeyString(k), h.ValueString(k, op.Value))
				}
			}
			if tx.Status == Aborted {
				if op.Kind == OpAppend {
					p.aborted[p.base[k]+int32(op.Value)] = true
				}
				continue
			}
			if tx.Status == Unknown {
				p.relevant[t] = true
			}
			switch op.Kind {
			case OpAppend:
				bs := p.blocks[t]
				j := slices.IndexFunc(bs, func(b txnBlock) bool { return b.key == k })
				if j < 0 {
					bs = append(bs, txnBlock{key: k})
					j = len(bs) - 1
				}
				bs[j].vals = append(bs[j].vals, op.Value)
				p.blocks[t] = bs
				ver := p.base[k] + int32(op.Value)
				if a := p.appenders[ver]; len(a) == 0 || a[len(a)-1] != TxnID(t) {
					p.appenders[ver] = append(a, TxnID(t))
				}
			case OpRead, OpReadList:
				r := listRead{t: TxnID(t), op: int32(i), key: k}
				var l []ValueID
				if op.Kind == OpReadList {
					l = h.List(op)
				}
				own := p.block(TxnID(t), k)
				if n := len(l) - len(own); n >= 0 && slices.Equal(l[n:], own) {
					r.view = l[:n]
				} else {
					r.bad = true
				}
				p.readsOf[t] = append(p.readsOf[t], int32(len(p.reads)))
				p.reads = append(p.reads, r)
			}
		}
	}
	p.writeKeys = make([][]KeyID, len(h.Txns))
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() && !slices.Contains(p.writeKeys[t], op.Key) {
				p.writeKeys[t] = append(p.writeKeys[t], op.Key)
			}
		}
		if h.Txns[t].Status != Unknown {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind == OpWrite && !p.isList[op.Key] && regRead[int64(op.Key)<<32|int64(op.Value)] {
				p.needed[t] = true
			}
		}
	}
	return p, nil
}

// writesReadKey reports whether w writes a key other than k that the
// transaction stamped t in readKey reads.
func (p *listPrep) writesReadKey(w TxnID, k KeyID, readKey []int32, t int32) bool {
	for _, x := range p.writeKeys[w] {
		if x != k && readKey[x] == t {
			return true
		}
	}
	return false
}

// block returns t's block on k so far (all of it once preparation is
// done).
func (p *listPrep) block(t TxnID, k KeyID) []ValueID {
	for _, b := range p.blocks[t] {
		if b.key == k {
			return b.vals
		}
	}
	return nil
}

func (p *listPrep) cands(k KeyID, v ValueID) []TxnID { return p.appenders[p.base[k]+int32(v)] }
