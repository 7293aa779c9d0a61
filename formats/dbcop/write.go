package dbcop

import (
	"bufio"
	"encoding/binary"
	"io"

	"github.com/hyperiso/hyperiso/formats/internal/express"
	"github.com/hyperiso/hyperiso/history"
)

// WriteInfo is the info string Write puts in the header; Start and End are
// the Unix epoch, as dbcop and AWDIT need a valid RFC 3339 time there.
const (
	WriteInfo = "converted by hyperiso"
	writeTime = "1970-01-01T00:00:00Z"
)

// Write writes h as a dbcop history.bincode so that Parse gives back h up to
// ids: one dbcop session per session (in order, empty ones included), one
// transaction per transaction with success 1 when committed and 0 when
// aborted, every operation a successful event. Aborted writes outside any
// transaction become failed write events at the end of the first
// transaction (of an extra aborted one in an extra session when there is
// none). Params hold PolySI's totals (sessions, keys, transactions,
// events), so the reader does not warn about them.
//
// Write refuses, writing nothing, what the format cannot hold, naming all
// of it: transactions of unknown outcome, list operations, real-time
// intervals, levels, stated version orders and lenient drops. Values are
// renamed per key (express.Values) so that T⊥'s value is 0 and a key
// without one never shows 0, which changes no verdict.
func Write(w io.Writer, h *history.History) error {
	vals := express.NewValues(h, 0)
	p := express.New("the dbcop format")
	express.Check(h, express.Limits{
		Values:        vals,
		Aborted:       true,
		AbortedWrites: true,
	}, p)
	if err := p.Err(); err != nil {
		return err
	}
	nSess := len(h.Sessions)
	extra := len(h.AbortedWrites) > 0 && len(h.Txns) == 1
	if extra {
		nSess++
	}
	events := len(h.AbortedWrites)
	for t := 1; t < len(h.Txns); t++ {
		events += len(h.Txns[t].Ops)
	}
	txns := len(h.Txns) - 1
	if extra {
		txns++
	}

	bw := bufio.NewWriterSize(w, 64<<10)
	var b [18]byte
	u64 := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:8], x)
		bw.Write(b[:8])
	}
	str := func(s string) {
		u64(uint64(len(s)))
		bw.WriteString(s)
	}
	event := func(write bool, key, val int64, ok bool) {
		b[0], b[17] = 0, 0
		if write {
			b[0] = 1
		}
		if ok {
			b[17] = 1
		}
		binary.LittleEndian.PutUint64(b[1:9], uint64(key))
		binary.LittleEndian.PutUint64(b[9:17], uint64(val))
		bw.Write(b[:18])
	}
	failed := func() {
		for _, v := range h.AbortedWrites {
			event(true, h.Key(v.Key), vals.Of(v.Key, v.Value), false)
		}
	}
	flag := func(ok bool) {
		if ok {
			bw.WriteByte(1)
		} else {
			bw.WriteByte(0)
		}
	}

	u64(0)
	u64(uint64(nSess))
	u64(uint64(len(h.Keys)))
	u64(uint64(txns))
	u64(uint64(events))
	str(WriteInfo)
	str(writeTime)
	str(writeTime)
	u64(uint64(nSess))
	firstDone := false
	for s := range h.Sessions {
		u64(uint64(len(h.Sessions[s].Txns)))
		for _, t := range h.Sessions[s].Txns {
			tx := &h.Txns[t]
			n := len(tx.Ops)
			carry := !firstDone
			if carry {
				n += len(h.AbortedWrites)
			}
			firstDone = true
			u64(uint64(n))
			for _, op := range tx.Ops {
				event(op.Kind.IsWrite(), h.Key(op.Key), vals.Of(op.Key, op.Value), true)
			}
			if carry {
				failed()
			}
			flag(tx.Status == history.Committed)
		}
	}
	if extra {
		u64(1)
		u64(uint64(len(h.AbortedWrites)))
		failed()
		flag(false)
	}
	return bw.Flush()
}
