package viper

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hyperiso/hyperiso/formats/internal/express"
	"github.com/hyperiso/hyperiso/history"
)

// Write writes h as a Viper log directory dir, which it creates (it may
// exist, but must hold no J*.log file), so that Read gives back h up to
// transaction ids and sessions without transactions: one J<n>.log per
// session that has transactions, n its session id (its index when some id
// is negative), every transaction one line; T⊥'s writes other
// than nil as an "isInitial" transaction alone in a log of its own; aborted
// writes as failed writes ("w" with flag false) at the end of the first
// transaction.
//
// Rows are written in Viper's range syntax: a predicate read over [lo, hi)
// as ["range", lo, hi-1, [{"id": k, "sk": k, "val": v}, …], []] with the
// rows it returned, an insert as Viper's upsert ["w", k, v, true] (the
// model's insert and write of a row are one thing, docs/predicates.md; it
// reads back as a write), an absent row read as ["r", k, null, false].
//
// Write refuses, writing nothing, what the format cannot hold, naming all
// of it: aborted and unknown-outcome transactions (Viper takes every line
// as committed), list operations, real-time intervals, levels, stated
// version orders, lenient drops, deletes (Viper's "d" writes a value of its
// own that a later read of the dead row names; the model does not say which
// delete a read of an absent row saw), and a history without transactions.
func Write(dir string, h *history.History) error {
	p := express.New("the Viper format")
	express.Check(h, express.Limits{AbortedWrites: true, Rows: true}, p)
	deletes, first := 0, ""
	for t := 1; t < len(h.Txns); t++ {
		if slices.ContainsFunc(h.Txns[t].Ops, func(op history.Op) bool { return op.Src == history.SrcDelete }) {
			if deletes == 0 {
				first = h.TxnString(history.TxnID(t))
			}
			deletes++
		}
	}
	if deletes > 0 {
		p.Add("%d transactions with deletes (first: %s): Viper names the delete that a read of a dead row saw, which the model does not keep", deletes, first)
	}
	if len(h.Txns) == 1 {
		p.Add("no transactions (a Viper history needs one)")
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "J*.log")); len(logs) > 0 {
		return fmt.Errorf("%s already holds %s: a Viper history is every J<n>.log of its directory, so write into a new or empty one", dir, filepath.Base(logs[0]))
	}

	ids := make([]int64, len(h.Sessions))
	next := int64(0)
	for i, s := range h.Sessions {
		ids[i] = s.ID
		if s.ID < 0 {
			for j := range ids {
				ids[j] = int64(j)
			}
			next = int64(len(ids))
			break
		}
		next = max(next, s.ID+1)
	}
	value := func(buf []byte, k history.KeyID, v history.ValueID) []byte {
		if x := h.Value(k, v); x != history.EmptyList {
			return strconv.AppendInt(buf, x, 10)
		}
		return append(buf, "null"...)
	}
	mop := func(buf []byte, op string, k history.KeyID, v history.ValueID, flag bool) []byte {
		buf = append(buf, `["`...)
		buf = append(buf, op...)
		buf = append(buf, `", `...)
		buf = strconv.AppendInt(buf, h.Key(k), 10)
		buf = append(buf, ", "...)
		buf = value(buf, k, v)
		return append(buf, ", "+strconv.FormatBool(flag)+"]"...)
	}
	var init []byte
	for _, op := range h.Txns[history.InitTxn].Ops {
		if h.Value(op.Key, op.Value) == history.EmptyList {
			continue // every key starts as nil anyway
		}
		if len(init) > 0 {
			init = append(init, ", "...)
		}
		init = mop(init, "w", op.Key, op.Value, true)
	}
	write := func(n int64, data []byte) error {
		return os.WriteFile(filepath.Join(dir, "J"+strconv.FormatInt(n, 10)+".log"), data, 0o644)
	}
	if len(init) > 0 {
		line := append([]byte(`{"value": [`), init...)
		if err := write(next, append(line, "], \"isInitial\": true}\n"...)); err != nil {
			return err
		}
	}
	carried := false
	for s := range h.Sessions {
		if len(h.Sessions[s].Txns) == 0 {
			// An empty log would say nothing (and could be taken for
			// another format's); a session without transactions changes
			// no verdict.
			continue
		}
		var buf []byte
		for _, t := range h.Sessions[s].Txns {
			buf = append(buf, `{"value": [`...)
			ops, sels := h.Txns[t].Ops, h.SelectsOf(t)
			for i, n := 0, 0; i < len(ops) || len(sels) > 0; n++ {
				if n > 0 {
					buf = append(buf, ", "...)
				}
				if len(sels) > 0 && (int(sels[0].At) <= i || i >= len(ops)) {
					buf = rangeOp(buf, h, sels[0])
					i += int(sels[0].N)
					sels = sels[1:]
					continue
				}
				op := ops[i]
				i++
				kind, flag := "r", false
				if op.Kind.IsWrite() {
					kind, flag = "w", true
				}
				buf = mop(buf, kind, op.Key, op.Value, flag)
			}
			if !carried {
				carried = true
				for i, v := range h.AbortedWrites {
					if i > 0 || len(h.Txns[t].Ops) > 0 {
						buf = append(buf, ", "...)
					}
					buf = mop(buf, "w", v.Key, v.Value, false)
				}
			}
			buf = append(buf, "]}\n"...)
		}
		if err := write(ids[s], buf); err != nil {
			return err
		}
	}
	return nil
}

// rangeOp appends s as Viper's ["range", k1, k2, live, []]: the bounds
// inclusive, the rows s returned live, the others left out (absent).
func rangeOp(buf []byte, h *history.History, s history.Select) []byte {
	lo, hi := s.Lo, s.Hi-1
	if s.Lo == s.Hi && s.Lo == math.MinInt64 {
		lo, hi = math.MinInt64+1, math.MinInt64 // empty either way
	}
	buf = append(buf, `["range", `...)
	buf = strconv.AppendInt(buf, lo, 10)
	buf = append(buf, ", "...)
	buf = strconv.AppendInt(buf, hi, 10)
	buf = append(buf, ", ["...)
	n := 0
	for _, op := range s.Ops(h) {
		v := h.Value(op.Key, op.Value)
		if v == history.EmptyList {
			continue
		}
		if n > 0 {
			buf = append(buf, ", "...)
		}
		n++
		k := strconv.FormatInt(h.Key(op.Key), 10)
		buf = append(buf, `{"id": `+k+`, "sk": `+k+`, "val": `...)
		buf = strconv.AppendInt(buf, v, 10)
		buf = append(buf, '}')
	}
	return append(buf, "], []]"...)
}
