// Package histtest builds compact hand-made histories for tests: the i-th
// transaction given gets TxnID i and id i, and every key starts at 0
// (written by the initial transaction).
package histtest

import "github.com/hyperiso/hyperiso/history"

// Op is a read or a write of one key.
type Op struct {
	Read       bool
	Key, Value int64
}

// R reads value v of key x.
func R(x, v int64) Op { return Op{true, x, v} }

// W writes value v to key x.
func W(x, v int64) Op { return Op{false, x, v} }

// Txn is a transaction of session Session; the zero Status is committed.
type Txn struct {
	Session int64
	Ops     []Op
	Status  history.Status
}

// T is a committed transaction of session s.
func T(s int64, ops ...Op) Txn { return Txn{Session: s, Ops: ops} }

// Build makes the history of txns, in order.
func Build(txns ...Txn) *history.History {
	b := history.NewBuilder("test", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	for i, t := range txns {
		id := b.Begin(b.Session(t.Session), int64(i+1), t.Status, history.Pos{})
		for _, o := range t.Ops {
			if o.Read {
				b.Read(id, o.Key, o.Value)
			} else {
				b.Write(id, o.Key, o.Value)
			}
		}
	}
	return b.Finish()
}
