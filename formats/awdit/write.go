package awdit

import (
	"bufio"
	"io"
	"strconv"

	"github.com/hyperiso/hyperiso/formats/internal/express"
	"github.com/hyperiso/hyperiso/history"
)

// Write writes h as an AWDIT test history so that Parse gives back h up to
// ids: T⊥'s writes (all of value 0) as a first session of one transaction,
// then every session with at least one non-empty transaction, in order.
// Keys and values are written as unsigned 64-bit numbers, as the reader
// keeps all 64 bits; values are renamed per key (express.Values) so that
// T⊥'s value is 0 and a key without one never shows 0, which changes no
// verdict. Transactions without operations are not kept (AWDIT
// skips them).
//
// Write refuses, writing nothing, what the format cannot hold, naming all
// of it: aborted and unknown-outcome transactions, aborted writes, list
// operations, real-time intervals, levels, stated version orders, lenient
// drops, and (with no initial writes) a
// history whose every session is one transaction writing only 0, which the
// reader would take for the initial transaction.
func Write(w io.Writer, h *history.History) error {
	vals := express.NewValues(h, 0)
	p := express.New("the AWDIT format")
	express.Check(h, express.Limits{}, p)
	order := sessionOrder(h, vals)
	init := h.Txns[history.InitTxn].Ops
	if len(init) == 0 && len(order) > 0 && initLikeSession(h, vals, order[0]) {
		p.Add("every session is one transaction that only writes 0, and the first would read back as the initial transaction")
	}
	// Transactions without operations leave no line: with nothing else,
	// the file would read back as no history, or as T⊥ alone.
	ops := 0
	for t := 1; t < len(h.Txns); t++ {
		ops += len(h.Txns[t].Ops)
	}
	if ops == 0 {
		p.Add("no transaction with operations (a transaction without operations leaves no line)")
	}
	if err := p.Err(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 64)
	op := func(c byte, key, val int64) {
		buf = append(buf[:0], c, ' ')
		buf = strconv.AppendUint(buf, uint64(key), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendUint(buf, uint64(val), 10)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	first := true
	if len(init) > 0 {
		for _, o := range init {
			op('w', h.Key(o.Key), 0)
		}
		first = false
	}
	for _, s := range order {
		if !first {
			bw.WriteString("=====\n")
		}
		first = false
		n := 0
		for _, t := range h.Sessions[s].Txns {
			ops := h.Txns[t].Ops
			if len(ops) == 0 {
				continue
			}
			if n > 0 {
				bw.WriteString("-----\n")
			}
			n++
			for _, o := range ops {
				c := byte('r')
				if o.Kind.IsWrite() {
					c = 'w'
				}
				op(c, h.Key(o.Key), vals.Of(o.Key, o.Value))
			}
		}
	}
	return bw.Flush()
}

// sessionOrder lists the sessions that have a non-empty transaction. With
// no initial writes to go first, a session that is one transaction writing
// only 0 must not be the first one, so the first session that is not such
// is moved to the front.
func sessionOrder(h *history.History, vals *express.Values) []int32 {
	var order []int32
	for s := range h.Sessions {
		for _, t := range h.Sessions[s].Txns {
			if len(h.Txns[t].Ops) > 0 {
				order = append(order, int32(s))
				break
			}
		}
	}
	if len(h.Txns[history.InitTxn].Ops) > 0 {
		return order
	}
	for i, s := range order {
		if !initLikeSession(h, vals, s) {
			copy(order[1:i+1], order[:i])
			order[0] = s
			break
		}
	}
	return order
}

// initLikeSession reports whether the reader would take session s, written
// first, for the initial transaction: one non-empty transaction writing only 0.
func initLikeSession(h *history.History, vals *express.Values, s int32) bool {
	n := 0
	for _, t := range h.Sessions[s].Txns {
		ops := h.Txns[t].Ops
		if len(ops) == 0 {
			continue
		}
		if n++; n > 1 {
			return false
		}
		for _, o := range ops {
			if !o.Kind.IsWrite() || vals.Of(o.Key, o.Value) != 0 {
				return false
			}
		}
	}
	return n == 1
}
