package explain

import (
	"github.com/hyperiso/hyperiso/history"
)

// OpRef names one operation of the original history.
type OpRef struct {
	Txn history.TxnID
	Op  int32
}

// Sub is a sub-history: some transactions of an original history, with T⊥,
// session order among them, and every operation except the reads that
// could have read from a transaction left out.
type Sub struct {
	H *history.History
	// Orig maps a TxnID of H to the TxnID of the original history.
	Orig []history.TxnID
	// Dropped lists the reads left out, in the original's terms.
	Dropped []OpRef
}

// NewSub builds the sub-history of h made of the transactions keep accepts
// (T⊥ always). A read is kept when every transaction that could have
// written the value it returned is kept too (T⊥ is), or when it reads its
// own transaction's earlier write, or when force names it; any other read
// is left out. This keeps the sub-history a faithful restriction: an order
// that makes the whole history consistent at a level, restricted to the
// kept transactions, makes the sub-history consistent too, so a violating
// sub-history proves the whole history violating.
//
// A predicate read stays one: kept whole, as a predicate read over its
// range, when each of its rows could be kept, else left out whole (its
// rows read as point reads would be ordered, or items, where read
// committed and repeatable read leave them free).
func NewSub(h *history.History, keep []bool, force map[OpRef]bool) *Sub {
	ix := h.Index()
	b := history.NewBuilder(h.Source, h.Format)
	b.SetInit(h.InitKind, h.Txns[history.InitTxn].ID)
	b.SetInitPos(h.Txns[history.InitTxn].Pos)
	for k, v := range h.Meta {
		b.SetMeta(k, v)
	}
	s := &Sub{Orig: []history.TxnID{history.InitTxn}}
	var appenders map[history.Version][]history.TxnID
	used := make([]bool, len(h.Keys))
	// written[k] == t+1: transaction t wrote key k before the current op.
	written := make([]int32, len(h.Keys))
	// Sessions in the original order, so that session ids and order stay.
	sess := make([]int32, len(h.Sessions))
	for i := range sess {
		sess[i] = -1
	}
	for t := 1; t < len(h.Txns); t++ {
		if !keep[t] {
			continue
		}
		tx := &h.Txns[t]
		if sess[tx.Session] < 0 {
			sess[tx.Session] = b.Session(h.Sessions[tx.Session].ID)
		}
		nt := b.Begin(sess[tx.Session], tx.ID, tx.Status, tx.Pos)
		s.Orig = append(s.Orig, history.TxnID(t))
		if tx.Level != history.LevelNone {
			b.SetLevel(nt, tx.Level)
		}
		if tx.Timed {
			b.SetInterval(nt, tx.Start, tx.End)
		}
		mark := int32(t + 1)
		for i, op := range tx.Ops {
			k := op.Key
			if sel, ok := h.SelectOf(op); ok {
				if int32(i) == sel.At {
					s.keepSelect(b, h, nt, history.TxnID(t), sel, keep, force, written, mark, used)
				}
				continue
			}
			if op.Kind == history.OpReadList && !force[OpRef{history.TxnID(t), int32(i)}] {
				// A list read shows every element's appender: kept only
				// when each transaction that appended one of them is.
				if appenders == nil {
					appenders = listAppenders(h)
				}
				all := true
				for _, v := range h.List(op) {
					for _, w := range appenders[history.Version{Key: k, Value: v}] {
						all = all && (w == history.TxnID(t) || keep[w])
					}
				}
				if !all {
					s.Dropped = append(s.Dropped, OpRef{history.TxnID(t), int32(i)})
					continue
				}
			} else if op.Kind.IsRead() && written[k] != mark && !force[OpRef{history.TxnID(t), int32(i)}] {
				all := true
				for _, w := range ix.Writers(k, op.Value) {
					if w != history.TxnID(t) && !keep[w] && w != history.InitTxn {
						all = false
						break
					}
				}
				if !all {
					s.Dropped = append(s.Dropped, OpRef{history.TxnID(t), int32(i)})
					continue
				}
			}
			used[k] = true
			key, val := h.Key(k), h.Value(k, op.Value)
			switch op.Kind {
			case history.OpRead:
				b.Read(nt, key, val)
			case history.OpWrite:
				// Inserts and deletes stay what they were: a delete is a
				// write of the empty value, which a plain write may not be.
				switch op.Src {
				case history.SrcInsert:
					b.Insert(nt, key, val)
				case history.SrcDelete:
					b.Delete(nt, key)
				default:
					b.Write(nt, key, val)
				}
				written[k] = mark
			case history.OpAppend:
				b.Append(nt, key, val)
				written[k] = mark
			case history.OpReadList:
				list := h.List(op)
				raw := make([]int64, len(list))
				for j, v := range list {
					raw[j] = h.Value(k, v)
				}
				b.ReadList(nt, key, raw, val)
			}
		}
	}
	for _, op := range h.Txns[history.InitTxn].Ops {
		if used[op.Key] {
			b.InitWrite(h.Key(op.Key), h.Value(op.Key, op.Value))
		}
	}
	for _, w := range h.AbortedWrites {
		if used[w.Key] {
			b.AbortedWrite(h.Key(w.Key), h.Value(w.Key, w.Value))
		}
	}
	for _, vh := range h.VersionHints {
		if used[vh.Key] {
			b.VersionHint(h.Key(vh.Key), h.Value(vh.Key, vh.Before), h.Value(vh.Key, vh.After))
		}
	}
	if h.KeyNames != nil {
		for k, name := range h.KeyNames {
			if used[k] && name != "" {
				b.SetKeyName(h.Key(history.KeyID(k)), name)
			}
		}
	}
	for k, names := range h.ValueNames {
		for v, name := range names {
			if used[k] && name != "" {
				b.SetValueName(h.Key(history.KeyID(k)), h.Values[k][v], name)
			}
		}
	}
	s.H = b.Finish()
	return s
}

// keepSelect adds t's predicate read sel to b as transaction nt's when
// each of its rows could be kept (see NewSub), else lists its rows as
// dropped.
func (s *Sub) keepSelect(b *history.Builder, h *history.History, nt, t history.TxnID, sel history.Select, keep []bool, force map[OpRef]bool, written []int32, mark int32, used []bool) {
	ix := h.Index()
	ops := sel.Ops(h)
	for j, op := range ops {
		ref := OpRef{t, sel.At + int32(j)}
		if written[op.Key] == mark || force[ref] {
			continue
		}
		for _, w := range ix.Writers(op.Key, op.Value) {
			if w != t && !keep[w] && w != history.InitTxn {
				for j := range ops {
					s.Dropped = append(s.Dropped, OpRef{t, sel.At + int32(j)})
				}
				return
			}
		}
	}
	var rows []history.Version
	for _, op := range ops {
		used[op.Key] = true
		if v := h.Value(op.Key, op.Value); v != history.EmptyList {
			k := b.KeyID(h.Key(op.Key))
			rows = append(rows, history.Version{Key: k, Value: b.ValueID(k, v)})
		}
	}
	b.SelectWhereID(nt, sel.Lo, sel.Hi, sel.Test, rows)
}

// listAppenders maps each appended version to the transactions that may
// have committed and appended it.
func listAppenders(h *history.History) map[history.Version][]history.TxnID {
	out := map[history.Version][]history.TxnID{}
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status == history.Aborted {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind == history.OpAppend {
				v := history.Version{Key: op.Key, Value: op.Value}
				if ws := out[v]; len(ws) == 0 || ws[len(ws)-1] != history.TxnID(t) {
					out[v] = append(ws, history.TxnID(t))
				}
			}
		}
	}
	return out
}
