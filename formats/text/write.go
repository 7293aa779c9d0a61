package text

import (
	"bufio"
	"io"
	"strconv"

	"github.com/hyperiso/hyperiso/formats/internal/express"
	"github.com/hyperiso/hyperiso/history"
)

// Write writes h in the text format, one line per operation in TxnID order,
// so that Parse gives back h up to ids: the same sessions in the same order,
// the same transactions and operations, the initial value 0 on every key.
// Values are renamed per key (express.Values) so that T⊥'s value is 0, a
// key without one never shows 0, and no value is negative; a negative key
// becomes a non-negative one no key has. Renaming changes no verdict.
// An aborted transaction becomes its writes with txn -1 (its reads, which no
// check looks at, are not kept); a transaction without operations has no
// line and is not kept.
//
// Write refuses, writing nothing, a history the format cannot hold, naming
// all of it: transactions of unknown outcome, list operations, real-time
// intervals, declared levels, stated version orders, lenient drops, and a transaction that only writes 0 while no other
// does, which the reader would take for the initial transaction.
func Write(w io.Writer, h *history.History) error {
	vals := express.NewValues(h, 0).NonNegative()
	keys := express.NonNegativeKeys(h)
	p := express.New("the text format")
	express.Check(h, express.Limits{
		Values:        vals,
		Aborted:       true,
		AbortedWrites: true,
	}, p)
	// Transactions without operations leave no line: if they are all the
	// committed ones, the file would read back as a history with nothing
	// to check (or as no history at all).
	committed, kept := 0, 0
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status != history.Aborted {
			committed++
			if len(h.Txns[t].Ops) > 0 {
				kept++
			}
		}
	}
	if kept == 0 && (committed > 0 || len(h.Txns) == 1) {
		p.Add("no committed transaction with operations (a transaction without operations leaves no line)")
	}
	if t := promotable(h, vals); t > 0 {
		p.Add("%s only writes 0 and is the only transaction that writes 0: it would read back as the initial transaction", h.TxnString(t))
	}
	if err := p.Err(); err != nil {
		return err
	}
	ids := express.IDs(h, func(id int64) bool { return id >= 0 })
	sessIDs := sessionIDs(h)
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 128)
	line := func(op byte, key, val, sess, txn int64) {
		buf = append(buf[:0], op, '(')
		buf = strconv.AppendInt(buf, key, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, val, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, sess, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, txn, 10)
		buf = append(buf, ")\n"...)
		bw.Write(buf)
	}
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		txn := ids[t]
		if tx.Status == history.Aborted {
			txn = -1
		}
		for _, op := range tx.Ops {
			if txn == -1 && !op.Kind.IsWrite() {
				continue
			}
			c := byte('r')
			if op.Kind.IsWrite() {
				c = 'w'
			}
			line(c, keys[op.Key], vals.Of(op.Key, op.Value), sessIDs[tx.Session], txn)
		}
	}
	sess := int64(0)
	if len(sessIDs) > 0 {
		sess = sessIDs[0]
	}
	for _, v := range h.AbortedWrites {
		line('w', keys[v.Key], vals.Of(v.Key, v.Value), sess, -1)
	}
	return bw.Flush()
}

// sessionIDs are the native session ids when all are at least 0, else the
// session indexes.
func sessionIDs(h *history.History) []int64 {
	ids := make([]int64, len(h.Sessions))
	for i, s := range h.Sessions {
		if s.ID < 0 {
			for j := range ids {
				ids[j] = int64(j)
			}
			return ids
		}
		ids[i] = s.ID
	}
	return ids
}

// promotable returns the committed transaction the reader would promote to
// the initial one (§4.4): the only one that writes 0, when it does nothing
// else. 0 if there is none.
func promotable(h *history.History, vals *express.Values) history.TxnID {
	var only history.TxnID
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		if tx.Status == history.Aborted {
			continue
		}
		for _, op := range tx.Ops {
			if op.Kind.IsWrite() && vals.Of(op.Key, op.Value) == 0 {
				if only != 0 {
					return 0
				}
				only = history.TxnID(t)
				break
			}
		}
	}
	if only == 0 {
		return 0
	}
	for _, op := range h.Txns[only].Ops {
		if !op.Kind.IsWrite() || vals.Of(op.Key, op.Value) != 0 {
			return 0
		}
	}
	return only
}
