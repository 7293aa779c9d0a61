package oracle

import (
	"math/rand/v2"
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// SimMode says how Generate chooses the values reads return.
type SimMode uint8

const (
	// SimAny picks one of the modes below at random for each history.
	SimAny SimMode = iota
	// SimSerial executes the transactions one after another in a random
	// order that respects sessions.
	SimSerial
	// SimSnapshot gives each transaction a snapshot: a prefix of a random
	// commit order, mostly missing just the last one or two transactions
	// before it (no conflict detection, so lost updates appear).
	SimSnapshot
	// SimVisible lets each transaction see an arbitrary subset of the
	// transactions before it in a random commit order, reading from the last
	// visible writer (atomic visibility, but not necessarily causal).
	SimVisible
	// SimPerRead lets every read that follows no own write of its key see
	// its own random prefix of the commit order (non-repeatable and fractured
	// reads).
	SimPerRead
	numSimModes
)

var simModeNames = [...]string{"any", "serial", "snapshot", "visible", "per-read"}

func (m SimMode) String() string {
	if int(m) < len(simModeNames) {
		return simModeNames[m]
	}
	return "SimMode(?)"
}

// GenOptions shapes the histories Generate makes. Each history draws its
// counts uniformly between the minimum (1 when unset) and the maximum (at
// least the minimum).
type GenOptions struct {
	// MinSessions and Sessions bound the number of sessions; a session may
	// end up without transactions.
	MinSessions, Sessions int
	// MinTxns and Txns bound the number of transactions besides T⊥,
	// aborted ones included. Keep Txns at most MaxTxns for histories Check
	// accepts.
	MinTxns, Txns int
	// MinOps and MaxOps bound the number of operations of a transaction.
	MinOps, MaxOps int
	// MinKeys and Keys bound the number of keys; the keys are 0, 1, ….
	MinKeys, Keys int
	// Values is the largest value a write writes (from 1). T⊥ writes 0 to
	// every key.
	Values int
	// PAbort and PUnknown are the probabilities that a transaction is
	// aborted, or of unknown status (half of the unknown ones take effect
	// in the simulated execution).
	PAbort, PUnknown float64
	// PRead is the probability that an operation is a read.
	PRead float64
	// PZero is the probability that a write writes 0, the initial value.
	PZero float64
	// PNoise is the probability that a read returns a random value instead
	// of the simulated one: a value nobody wrote, a value some transaction
	// (perhaps aborted, perhaps not a final write) wrote, or a small value.
	PNoise float64
	// PDuplicate is the probability that a write writes a value another
	// transaction already wrote to the same key (the initial 0 included),
	// so that reads have several candidate writers.
	PDuplicate float64
	// PSkipSession is the probability that a transaction's view in
	// SimSnapshot and SimVisible ignores its session predecessors.
	PSkipSession float64
	// Mode chooses how reads are simulated.
	Mode SimMode
	// Times gives every transaction a real-time interval from the
	// simulation: it ends at its place in the commit order and starts just
	// after the last transaction its snapshot holds (SimSnapshot) or just
	// before it ends (the other modes), as a tester's clock would record.
	// It draws no random numbers: with it or without, the same seed gives
	// the same transactions.
	Times bool
}

// DefaultGenOptions returns the options the tests use: 2 or 3 sessions,
// 4 to MaxTxns transactions of 2 to 4 operations on 2 or 3 keys, values 1..3
// (and sometimes 0), some aborted and unknown transactions and a little
// noise. Set the minimums to 1 for the smallest shapes too.
func DefaultGenOptions() GenOptions {
	return GenOptions{
		MinSessions:  2,
		Sessions:     3,
		MinTxns:      4,
		Txns:         MaxTxns,
		MinOps:       2,
		MaxOps:       4,
		MinKeys:      2,
		Keys:         3,
		Values:       3,
		PAbort:       0.1,
		PUnknown:     0.1,
		PRead:        0.5,
		PZero:        0.05,
		PNoise:       0.03,
		PSkipSession: 0.1,
	}
}

// DupGenOptions returns DefaultGenOptions where a third of the writes
// repeat a value already written to their key, with a few more unknown
// transactions: most histories then have reads with several candidate
// writers, at every level.
func DupGenOptions() GenOptions {
	o := DefaultGenOptions()
	o.PDuplicate = 0.35
	o.PUnknown = 0.15
	return o
}

type genOp struct {
	read     bool
	key, val int64
}

type genTxn struct {
	sess   int
	status history.Status
	landed bool // its writes take effect in the simulation
	ops    []genOp
	final  map[int64]int64
	pos    int // position in the simulated commit order, from 1
	start  int // its start time for GenOptions.Times
}

// Generate makes a random small history from rng, the same one for the same
// sequence of random numbers. Reads mostly return what a plausible execution
// (chosen by opt.Mode) would return, so the histories mix satisfied and
// violated ones at every level.
func Generate(rng *rand.Rand, opt GenOptions) *history.History {
	between := func(lo, hi int) int {
		lo = max(lo, 1)
		return lo + rng.IntN(max(hi, lo)-lo+1)
	}
	nTxns, nSess, nKeys := between(opt.MinTxns, opt.Txns), between(opt.MinSessions, opt.Sessions), between(opt.MinKeys, opt.Keys)
	mode := opt.Mode
	if mode == SimAny || mode >= numSimModes {
		mode = SimMode(between(1, int(numSimModes)-1))
	}

	txs := make([]genTxn, nTxns)
	// written[k]: the values written to key k so far, 0 (T⊥) first.
	written := make([][]int64, nKeys)
	for k := range written {
		written[k] = []int64{0}
	}
	sessions := make([][]int, nSess)
	for i := range txs {
		tx := &txs[i]
		tx.sess = rng.IntN(nSess)
		sessions[tx.sess] = append(sessions[tx.sess], i)
		switch u := rng.Float64(); {
		case u < opt.PAbort:
			tx.status = history.Aborted
		case u < opt.PAbort+opt.PUnknown:
			tx.status = history.Unknown
			tx.landed = rng.IntN(2) == 0
		default:
			tx.status = history.Committed
			tx.landed = true
		}
		tx.final = map[int64]int64{}
		// Mostly fresh keys, and mostly reads before writes, as in
		// read-modify-write transactions; the rest gives internal reads.
		touched := make([]bool, nKeys)
		for range between(opt.MinOps, opt.MaxOps) {
			key := rng.IntN(nKeys)
			if rng.IntN(4) != 0 {
				var fresh []int
				for k, seen := range touched {
					if !seen {
						fresh = append(fresh, k)
					}
				}
				if len(fresh) > 0 {
					key = fresh[rng.IntN(len(fresh))]
				}
			}
			touched[key] = true
			op := genOp{read: rng.Float64() < opt.PRead, key: int64(key)}
			if !op.read {
				op.val = int64(between(1, opt.Values))
				if rng.Float64() < opt.PZero {
					op.val = 0
				}
				if opt.PDuplicate > 0 && rng.Float64() < opt.PDuplicate {
					op.val = written[key][rng.IntN(len(written[key]))]
				}
				written[key] = append(written[key], op.val)
			}
			tx.ops = append(tx.ops, op)
		}
		if rng.IntN(4) != 0 {
			slices.SortStableFunc(tx.ops, func(a, b genOp) int {
				switch {
				case a.read == b.read:
					return 0
				case a.read:
					return -1
				}
				return 1
			})
		}
		for _, op := range tx.ops {
			if !op.read {
				tx.final[op.key] = op.val
			}
		}
	}

	commit := interleave(rng, sessions)
	for p, i := range commit {
		txs[i].pos = p + 1
	}
	// valueAt returns the value of key k that a reader seeing the landed
	// transactions j with vis(j) observes: the last one in commit order.
	valueAt := func(k int64, vis func(j int) bool) int64 {
		for p := len(commit) - 1; p >= 0; p-- {
			j := commit[p]
			if v, ok := txs[j].final[k]; ok && txs[j].landed && vis(j) {
				return v
			}
		}
		return 0
	}
	prefix := func(pt int) func(int) bool {
		return func(j int) bool { return txs[j].pos < pt }
	}
	noise := func(k int64) int64 {
		switch rng.IntN(3) {
		case 0:
			return int64(max(opt.Values, 1) + 1)
		case 1:
			var vals []int64
			for _, tx := range txs {
				for _, op := range tx.ops {
					if !op.read && op.key == k {
						vals = append(vals, op.val)
					}
				}
			}
			if len(vals) > 0 {
				return vals[rng.IntN(len(vals))]
			}
			return 0
		default:
			return int64(rng.IntN(max(opt.Values, 1) + 1))
		}
	}

	for _, i := range commit {
		tx := &txs[i]
		tx.start = 2*tx.pos - 1
		respectSO := rng.Float64() >= opt.PSkipSession
		lo := 1 // the lowest snapshot point honouring session order
		if respectSO {
			for _, j := range sessions[tx.sess] {
				if j == i {
					break
				}
				lo = max(lo, txs[j].pos+1)
			}
		}
		var vis func(int) bool
		switch mode {
		case SimSerial:
			vis = prefix(tx.pos)
		case SimSnapshot:
			// Mostly a recent snapshot missing one or two transactions
			// (stale ones are often serializable all the same).
			pt := lo + rng.IntN(tx.pos-lo+1)
			if rng.IntN(4) != 0 {
				pt = max(lo, tx.pos-1-rng.IntN(2))
			}
			vis = prefix(pt)
			tx.start = 2*pt - 1
		case SimVisible:
			seen := make([]bool, len(txs))
			for j := range txs {
				seen[j] = txs[j].pos < tx.pos && (rng.IntN(2) == 0 || (respectSO && txs[j].sess == tx.sess))
			}
			vis = func(j int) bool { return seen[j] }
		}
		own := map[int64]int64{}
		for o := range tx.ops {
			op := &tx.ops[o]
			if !op.read {
				own[op.key] = op.val
				continue
			}
			if v, ok := own[op.key]; ok {
				op.val = v
			} else if mode == SimPerRead {
				op.val = valueAt(op.key, prefix(1+rng.IntN(tx.pos)))
			} else {
				op.val = valueAt(op.key, vis)
			}
			if rng.Float64() < opt.PNoise {
				op.val = noise(op.key)
			}
		}
	}

	b := history.NewBuilder("oracle.Generate", "oracle")
	b.SetInit(history.InitImplicit, 0)
	for k := range nKeys {
		b.InitWrite(int64(k), 0)
	}
	ids := make([]history.TxnID, nTxns)
	for n, i := range interleave(rng, sessions) {
		s := b.Session(int64(txs[i].sess))
		ids[i] = b.Begin(s, int64(n+1), txs[i].status, history.Pos{})
		if opt.Times {
			b.SetInterval(ids[i], int64(txs[i].start), int64(2*txs[i].pos))
		}
	}
	for i, tx := range txs {
		for _, op := range tx.ops {
			if op.read {
				b.Read(ids[i], op.key, op.val)
			} else {
				b.Write(ids[i], op.key, op.val)
			}
		}
	}
	return b.Finish()
}

// interleave returns a uniformly random interleaving of the lists.
func interleave(rng *rand.Rand, lists [][]int) []int {
	next := make([]int, len(lists))
	left := 0
	for _, l := range lists {
		left += len(l)
	}
	out := make([]int, 0, left)
	for ; left > 0; left-- {
		r := rng.IntN(left)
		for s, l := range lists {
			rem := len(l) - next[s]
			if r < rem {
				out = append(out, l[next[s]])
				next[s]++
				break
			}
			r -= rem
		}
	}
	return out
}
