package oracle

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
)

// MaxTxns is the largest number of committed plus unknown transactions (T⊥
// not counted) the oracle accepts.
const MaxTxns = 7

// Levels lists the levels the oracle decides, weakest first.
var Levels = []history.Level{history.RC, history.RA, history.CC, history.SI, history.SER}

// ReadFrom records the writer chosen for one read event of a witness.
type ReadFrom struct {
	Txn    history.TxnID // the reader
	Op     int           // index of the read in the reader's Ops
	Writer history.TxnID
}

// Witness shows why a history satisfies a level.
type Witness struct {
	Level history.Level
	// Committed holds the transactions taken as committed (C): T⊥, the
	// committed ones and the chosen unknown ones, ascending.
	Committed []history.TxnID
	// Order is a total order on Committed, T⊥ first: the serial order for
	// SER, the commit order for SI, co for RC, RA and CC.
	Order []history.TxnID
	// Snapshot, for SI only, is parallel to Order: Order[i] sees exactly
	// Order[:Snapshot[i]] (Snapshot[0] is 0).
	Snapshot []int
	// ReadsFrom names the writer of every read event of a member of C: the
	// external reads for SER, SI, CC and RA, the RC read events for RC. For
	// SER and SI it is the writer the definition makes the read observe.
	// Sorted by reader, then by operation.
	ReadsFrom []ReadFrom
}

// Check reports whether h satisfies level. It fails if the level is not one
// of Levels or if h has more than MaxTxns committed and unknown transactions.
func Check(h *history.History, level history.Level) (bool, error) {
	w, err := Find(h, level)
	return w != nil, err
}

// Find returns a witness that h satisfies level, or nil if it does not. It
// fails as Check does. The subsets of unknown transactions are tried in
// binary counting order over the unknown transactions in TxnID order,
// starting with none of them, and the first that works is returned.
func Find(h *history.History, level history.Level) (*Witness, error) {
	switch level {
	case history.RC, history.RA, history.CC, history.SI, history.SER:
	default:
		return nil, fmt.Errorf("oracle: unsupported level %v", level)
	}
	p, err := prepare(h)
	if err != nil {
		return nil, err
	}
	n := len(p.unknown)
	for mask := 0; mask < 1<<n; mask++ {
		c := p.members(mask)
		var w *Witness
		switch level {
		case history.SER, history.SI:
			w = strongSearch(p, c, level)
		default:
			w = weakSearch(p, c, level)
		}
		if w != nil {
			w.Level = level
			return w, nil
		}
	}
	return nil, nil
}

// CheckAll decides every level of Levels.
func CheckAll(h *history.History) (map[history.Level]bool, error) {
	out := make(map[history.Level]bool, len(Levels))
	for _, l := range Levels {
		ok, err := Check(h, l)
		if err != nil {
			return nil, err
		}
		out[l] = ok
	}
	return out, nil
}

// readEv is one read event: the read at Ops[op] of key returned val.
type readEv struct {
	op  int
	key history.KeyID
	val history.ValueID
}

// prep holds the per-transaction facts every level needs, computed from the
// operations alone.
type prep struct {
	h *history.History
	// final[t][k] is t's final write of key k, or -1.
	final [][]history.ValueID
	// ext[t] are t's external reads; rcReads[t] its RC read events.
	ext, rcReads [][]readEv
	// intOK[t]: t satisfies INT; rcOK[t]: every read after an own write
	// returns the latest own write.
	intOK, rcOK []bool
	// unknown lists the transactions of unknown status.
	unknown []history.TxnID
	// sess[t] and idx[t]: t's session and its position there, from
	// History.Sessions (-1 for T⊥).
	sess, idx []int
}

func prepare(h *history.History) (*prep, error) {
	if h == nil || len(h.Txns) == 0 {
		return nil, fmt.Errorf("oracle: history has no initial transaction")
	}
	if h.HasLists() {
		// Lists are internal/execoracle's: it defines their meaning from
		// executions, where this oracle would restate the checker's.
		return nil, fmt.Errorf("oracle: list operations are internal/execoracle's to decide")
	}
	nt, nk := len(h.Txns), h.NumKeys()
	p := &prep{
		h:       h,
		final:   make([][]history.ValueID, nt),
		ext:     make([][]readEv, nt),
		rcReads: make([][]readEv, nt),
		intOK:   make([]bool, nt),
		rcOK:    make([]bool, nt),
		sess:    make([]int, nt),
		idx:     make([]int, nt),
	}
	for t := range p.sess {
		p.sess[t], p.idx[t] = -1, -1
	}
	for si, s := range h.Sessions {
		for i, t := range s.Txns {
			if t <= history.InitTxn || int(t) >= nt || p.sess[t] >= 0 {
				return nil, fmt.Errorf("oracle: session %d lists transaction %d wrongly", si, t)
			}
			p.sess[t], p.idx[t] = si, i
		}
	}
	count := 0
	for t := range h.Txns {
		tx := &h.Txns[t]
		if t != int(history.InitTxn) {
			if p.sess[t] < 0 {
				return nil, fmt.Errorf("oracle: transaction %d is in no session", t)
			}
			switch tx.Status {
			case history.Committed:
				count++
			case history.Unknown:
				count++
				p.unknown = append(p.unknown, history.TxnID(t))
			}
		}
		final := make([]history.ValueID, nk)
		for k := range final {
			final[k] = -1
		}
		// last[k]: value of the latest op on k so far; wrote[k]: value of
		// the latest write of k so far (-1: none).
		last := make([]history.ValueID, nk)
		wrote := make([]history.ValueID, nk)
		touched := make([]bool, nk)
		for k := range wrote {
			wrote[k] = -1
		}
		p.intOK[t], p.rcOK[t] = true, true
		for i, op := range tx.Ops {
			k := op.Key
			switch {
			case op.Kind.IsWrite():
				final[k] = op.Value
				wrote[k] = op.Value
			case t == int(history.InitTxn):
				continue // T⊥'s operations are its writes
			case op.Kind.IsRead():
				ev := readEv{op: i, key: k, val: op.Value}
				if !touched[k] {
					p.ext[t] = append(p.ext[t], ev)
				} else if last[k] != op.Value {
					p.intOK[t] = false
				}
				if wrote[k] < 0 {
					p.rcReads[t] = append(p.rcReads[t], ev)
				} else if wrote[k] != op.Value {
					p.rcOK[t] = false
				}
			default:
				return nil, fmt.Errorf("oracle: transaction %d: unknown operation kind %v", t, op.Kind)
			}
			touched[k] = true
			last[k] = op.Value
		}
		p.final[t] = final
	}
	if h.Txns[history.InitTxn].Status != history.Committed {
		return nil, fmt.Errorf("oracle: the initial transaction is not committed")
	}
	if count > MaxTxns {
		return nil, fmt.Errorf("oracle: %d committed and unknown transactions, more than %d", count, MaxTxns)
	}
	return p, nil
}

// writes reports whether t writes key k.
func (p *prep) writes(t history.TxnID, k history.KeyID) bool { return p.final[t][k] >= 0 }

// cset is one choice of C.
type cset struct {
	// txns are the members, ascending; txns[0] is T⊥. local[t] is t's index
	// in txns, or -1.
	txns  []history.TxnID
	local []int
	// sess are the members of each session in session order (empty
	// sessions dropped).
	sess [][]history.TxnID
}

// members returns C for the subset mask of p.unknown.
func (p *prep) members(mask int) *cset {
	h := p.h
	in := make([]bool, len(h.Txns))
	for t := range h.Txns {
		in[t] = h.Txns[t].Status == history.Committed
	}
	in[history.InitTxn] = true
	for i, t := range p.unknown {
		if mask&(1<<i) != 0 {
			in[t] = true
		}
	}
	c := &cset{local: make([]int, len(h.Txns))}
	for t := range h.Txns {
		c.local[t] = -1
		if in[t] {
			c.local[t] = len(c.txns)
			c.txns = append(c.txns, history.TxnID(t))
		}
	}
	for _, s := range h.Sessions {
		var list []history.TxnID
		for _, t := range s.Txns {
			if in[t] && t != history.InitTxn {
				list = append(list, t)
			}
		}
		if len(list) > 0 {
			c.sess = append(c.sess, list)
		}
	}
	return c
}

// soBefore reports whether a precedes b in session order (T⊥ precedes all).
func (p *prep) soBefore(a, b history.TxnID) bool {
	if a == b || b == history.InitTxn {
		return false
	}
	if a == history.InitTxn {
		return true
	}
	return p.sess[a] == p.sess[b] && p.idx[a] < p.idx[b]
}
