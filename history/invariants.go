package history

import (
	"fmt"
)

// CheckInvariants checks the structural invariants every reader must keep:
// dense and unique interning, T⊥ first with one ascending write per key,
// sessions and transactions pointing at each other, operations and lists in
// range. Reader tests and fuzz targets call it on every history they build.
func (h *History) CheckInvariants() error {
	if len(h.Txns) == 0 {
		return fmt.Errorf("no T⊥")
	}
	if len(h.Values) != len(h.Keys) {
		return fmt.Errorf("%d keys but %d value tables", len(h.Keys), len(h.Values))
	}
	keys := map[int64]bool{}
	for k, raw := range h.Keys {
		if keys[raw] {
			return fmt.Errorf("key %d interned twice", raw)
		}
		keys[raw] = true
		vals := map[int64]bool{}
		for v, raw := range h.Values[k] {
			if h.IsOneOf(KeyID(k), ValueID(v)) {
				continue // a stand-in (OneOf): EmptyList again
			}
			v := raw
			if vals[v] {
				return fmt.Errorf("value %d of key %d interned twice", v, raw)
			}
			vals[v] = true
		}
	}
	checkOp := func(t int, op Op) error {
		if op.Key < 0 || int(op.Key) >= len(h.Keys) {
			return fmt.Errorf("txn %d: key id %d out of range", t, op.Key)
		}
		if op.Value < 0 || int(op.Value) >= len(h.Values[op.Key]) {
			return fmt.Errorf("txn %d: value id %d out of range", t, op.Value)
		}
		switch {
		case op.Kind == OpReadList:
			if op.List < 1 || int(op.List) > len(h.Lists) {
				return fmt.Errorf("txn %d: list %d out of range", t, op.List)
			}
			l := h.Lists[op.List-1]
			for _, v := range l {
				if v < 0 || int(v) >= len(h.Values[op.Key]) {
					return fmt.Errorf("txn %d: list element id %d out of range", t, v)
				}
			}
			if len(l) > 0 && l[len(l)-1] != op.Value {
				return fmt.Errorf("txn %d: list read value is not the last element", t)
			}
			if len(l) == 0 && h.Value(op.Key, op.Value) != EmptyList {
				return fmt.Errorf("txn %d: empty list read value is not EmptyList", t)
			}
		case op.Kind > OpReadList:
			return fmt.Errorf("txn %d: bad op kind %d", t, op.Kind)
		case op.Src == SrcSelect:
			if op.Kind != OpRead || op.List < 1 || int(op.List) > len(h.Selects) || h.Selects[op.List-1].Txn != TxnID(t) {
				return fmt.Errorf("txn %d: a predicate read's row with select %d", t, op.List)
			}
		case op.List != 0:
			return fmt.Errorf("txn %d: non-list op with a list", t)
		case op.Src > SrcSelect || op.Src != SrcPlain && op.Kind != OpWrite:
			return fmt.Errorf("txn %d: %v op marked %v", t, op.Kind, op.Src)
		case op.Src == SrcDelete && h.Value(op.Key, op.Value) != EmptyList:
			return fmt.Errorf("txn %d: a delete that writes %d", t, h.Value(op.Key, op.Value))
		}
		return nil
	}
	init := &h.Txns[InitTxn]
	if init.Session != -1 || init.Status != Committed {
		return fmt.Errorf("the initial transaction has session %d status %v", init.Session, init.Status)
	}
	for i, op := range init.Ops {
		if err := checkOp(0, op); err != nil {
			return err
		}
		if op.Kind != OpWrite {
			return fmt.Errorf("initial transaction op %d is %v", i, op.Kind)
		}
		if i > 0 && h.Key(init.Ops[i-1].Key) >= h.Key(op.Key) {
			return fmt.Errorf("initial writes not strictly ascending by key")
		}
	}
	if h.InitKind == InitNone && len(init.Ops) > 0 {
		return fmt.Errorf("InitNone but T⊥ writes")
	}
	seen := make([]bool, len(h.Txns))
	sessIDs := map[int64]bool{}
	for si, s := range h.Sessions {
		if sessIDs[s.ID] {
			return fmt.Errorf("session id %d twice", s.ID)
		}
		sessIDs[s.ID] = true
		for i, t := range s.Txns {
			if t <= 0 || int(t) >= len(h.Txns) {
				return fmt.Errorf("session %d: txn %d out of range", s.ID, t)
			}
			if seen[t] {
				return fmt.Errorf("txn %d in two places", t)
			}
			seen[t] = true
			if i > 0 && t <= s.Txns[i-1] {
				return fmt.Errorf("session %d: TxnIDs not increasing", s.ID)
			}
			tx := &h.Txns[t]
			if int(tx.Session) != si || int(tx.Index) != i {
				return fmt.Errorf("txn %d says session %d index %d, is at %d/%d", t, tx.Session, tx.Index, si, i)
			}
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		if !seen[t] {
			return fmt.Errorf("txn %d in no session", t)
		}
		for _, op := range h.Txns[t].Ops {
			if err := checkOp(t, op); err != nil {
				return err
			}
		}
	}
	for i, s := range h.Selects {
		if i > 0 && (s.Txn < h.Selects[i-1].Txn || s.Txn == h.Selects[i-1].Txn && s.At < h.Selects[i-1].At+h.Selects[i-1].N) {
			return fmt.Errorf("select %d out of order", i)
		}
		if s.Txn <= 0 || int(s.Txn) >= len(h.Txns) || s.At < 0 || s.N < 0 || int(s.At+s.N) > len(h.Txns[s.Txn].Ops) || s.Lo > s.Hi {
			return fmt.Errorf("select %d out of range", i)
		}
		for j, op := range s.Ops(h) {
			if op.Src != SrcSelect || int(op.List) != i+1 {
				return fmt.Errorf("select %d: op %d is not its row", i, int(s.At)+j)
			}
			if k := h.Key(op.Key); k < s.Lo || k >= s.Hi {
				return fmt.Errorf("select %d: row %d outside [%d,%d)", i, k, s.Lo, s.Hi)
			}
		}
	}
	for v, m := range h.OneOf {
		if v.Key < 0 || int(v.Key) >= len(h.Keys) || v.Value < 0 || int(v.Value) >= len(h.Values[v.Key]) || h.Values[v.Key][v.Value] != EmptyList || len(m) == 0 {
			return fmt.Errorf("stand-in %v out of range", v)
		}
		for i, x := range m {
			if x < 0 || int(x) >= len(h.Values[v.Key]) || h.IsOneOf(v.Key, x) || i > 0 && x <= m[i-1] {
				return fmt.Errorf("stand-in %v: member %d", v, x)
			}
		}
	}
	for t, tx := range h.Txns {
		for _, op := range tx.Ops {
			if len(h.OneOf) > 0 && op.Kind.IsWrite() && h.IsOneOf(op.Key, op.Value) {
				return fmt.Errorf("txn %d writes a stand-in", t)
			}
		}
	}
	for _, v := range h.AbortedWrites {
		if v.Key < 0 || int(v.Key) >= len(h.Keys) || v.Value < 0 || int(v.Value) >= len(h.Values[v.Key]) {
			return fmt.Errorf("aborted write out of range")
		}
	}
	return nil
}
