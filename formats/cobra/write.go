package cobra

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hyperiso/hyperiso/formats/internal/express"
	"github.com/hyperiso/hyperiso/history"
)

// WriteOptions tune Write.
type WriteOptions struct {
	// Flavour is Unique (the default; Auto means Unique) or Universal.
	Flavour Flavour
}

// isSentinel reports whether id is one of the ids of §3.3 a transaction or
// write must not have.
func isSentinel(id int64) bool {
	switch id {
	case InitID, NullID, UniversalID, GCTrue, GCFalse:
		return true
	}
	return false
}

// Write writes h as a Cobra log directory dir, which it creates (it may
// exist, but must hold no *.log file): one T<i>.log per session with a
// transaction, i counting from 0 in session order, so that Read gives back h
// up to ids and values: Cobra logs carry value identities, not the values.
//
// In the unique flavour (classic Cobra) every write gets its own write id
// and every read names the transaction and write it observed; a read of
// T⊥'s value is an INIT read, and a read of a value nothing wrote names a
// writer that is not in the logs. In the universal flavour (VeriStrong's
// benchmark logs) reads are matched to writes by value.
//
// Write refuses, writing nothing, what the format cannot hold, naming all
// of it: aborted and unknown-outcome transactions (Cobra logs only
// committed ones), aborted writes, list operations, real-time intervals,
// levels, stated version orders, lenient drops; in the unique flavour a
// value written twice to a key (a read could not name its writer), in the
// universal flavour a value both T⊥ and a transaction write.
func Write(dir string, h *history.History, opt WriteOptions) error {
	p := express.New("the Cobra format")
	express.Check(h, express.Limits{}, p)
	universal := opt.Flavour == Universal
	writer := duplicates(h, universal, p)
	if err := p.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(logs) > 0 {
		return fmt.Errorf("%s already holds %s: a Cobra history is every *.log of its directory, so write into a new or empty one", dir, filepath.Base(logs[0]))
	}

	ids := express.IDs(h, func(id int64) bool { return !isSentinel(id) })
	initVal := make(map[history.KeyID]history.ValueID)
	for _, op := range h.Txns[history.InitTxn].Ops {
		initVal[op.Key] = op.Value
	}
	// Write ids count from 1 and never reach a sentinel in practice; a
	// read of a value nothing wrote names a write id of its own and the
	// transaction id absent, one not given to any transaction.
	nextWid := int64(1)
	newWid := func() int64 {
		for isSentinel(nextWid) {
			nextWid++
		}
		nextWid++
		return nextWid - 1
	}
	absent := int64(0)
	for _, id := range ids[1:] {
		absent = max(absent, id)
	}
	absent++
	for isSentinel(absent) {
		absent++
	}
	wids := make(map[history.Version]int64)
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() {
				wids[history.Version{Key: op.Key, Value: op.Value}] = newWid()
			}
		}
	}

	file := 0
	for s := range h.Sessions {
		if len(h.Sessions[s].Txns) == 0 {
			continue
		}
		var buf []byte
		rec := func(c byte, xs ...int64) {
			buf = append(buf, c)
			for _, x := range xs {
				buf = binary.BigEndian.AppendUint64(buf, uint64(x))
			}
		}
		for _, t := range h.Sessions[s].Txns {
			id := ids[t]
			rec('S', id)
			for _, op := range h.Txns[t].Ops {
				key, val := h.Key(op.Key), h.Value(op.Key, op.Value)
				ver := history.Version{Key: op.Key, Value: op.Value}
				switch {
				case op.Kind.IsWrite() && universal:
					rec('W', UniversalID, key, val)
				case op.Kind.IsWrite():
					rec('W', wids[ver], key, val)
				case initVal[op.Key] == op.Value && hasInit(initVal, op.Key):
					rec('R', InitID, InitID, key, val)
				case universal:
					rec('R', UniversalID, UniversalID, key, val)
				default:
					wt := absent
					if w, ok := writer[ver]; ok {
						wt = ids[w]
					} else if _, ok := wids[ver]; !ok {
						wids[ver] = newWid()
					}
					rec('R', wt, wids[ver], key, val)
				}
			}
			rec('C', id)
		}
		name := filepath.Join(dir, fmt.Sprintf("T%d.log", file))
		file++
		if err := os.WriteFile(name, buf, 0o644); err != nil {
			return err
		}
	}
	if file == 0 {
		return fmt.Errorf("the Cobra format cannot hold a history without transactions: a Cobra history needs a *.log file")
	}
	return nil
}

func hasInit(m map[history.KeyID]history.ValueID, k history.KeyID) bool {
	_, ok := m[k]
	return ok
}

// duplicates finds each version's writer and reports the versions the
// flavour cannot tell apart: in the unique flavour a version written by two
// writes (T⊥ counted), in the universal one a version of T⊥ that a
// transaction writes too.
func duplicates(h *history.History, universal bool, p *express.Problems) map[history.Version]history.TxnID {
	writer := make(map[history.Version]history.TxnID)
	for _, op := range h.Txns[history.InitTxn].Ops {
		writer[history.Version{Key: op.Key, Value: op.Value}] = history.InitTxn
	}
	var n int
	var first string
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if !op.Kind.IsWrite() {
				continue
			}
			ver := history.Version{Key: op.Key, Value: op.Value}
			w, seen := writer[ver]
			if seen && (!universal || w == history.InitTxn) {
				if n == 0 {
					by := "T⊥"
					if w != history.InitTxn {
						by = h.TxnString(w)
					}
					first = fmt.Sprintf("key %s value %d by %s and %s", h.KeyString(op.Key), h.Value(op.Key, op.Value), by, h.TxnString(history.TxnID(t)))
				}
				n++
				continue
			}
			if !seen {
				writer[ver] = history.TxnID(t)
			}
		}
	}
	if n > 0 {
		why := "classic Cobra logs name each read's writer, so a value may be written once per key"
		if universal {
			why = "universal-flavour logs tell initial reads from others by a sentinel, not by value"
		}
		p.Add("%d repeated writes of a value (first: %s; %s)", n, first, why)
	}
	return writer
}
