package oracle

import (
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// Format renders a small history for test failure messages, one transaction
// per line in session order, with input keys and values:
//
//	T⊥: w(0,0) w(1,0)
//	s0: [1] r(0,0) w(0,1)  [3 aborted] r(1,0)
//	s1: [2 unknown] r(0,1)
//
// [n] is the TxnID.
func Format(h *history.History) string {
	var b strings.Builder
	ops := func(t history.TxnID) {
		for _, op := range h.Txns[t].Ops {
			fmt.Fprintf(&b, " %v(%s,%d)", op.Kind, h.KeyString(op.Key), h.Value(op.Key, op.Value))
		}
	}
	b.WriteString("T⊥:")
	ops(history.InitTxn)
	b.WriteByte('\n')
	for _, s := range h.Sessions {
		fmt.Fprintf(&b, "s%d:", s.ID)
		for i, t := range s.Txns {
			if i > 0 {
				b.WriteByte(' ')
			}
			if st := h.Txns[t].Status; st != history.Committed {
				fmt.Fprintf(&b, " [%d %v]", t, st)
			} else {
				fmt.Fprintf(&b, " [%d]", t)
			}
			ops(t)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
