package elle_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// simMode is how the simulated database executes transactions.
type simMode uint8

const (
	// simSerial runs each transaction atomically at its completion:
	// strictly serializable.
	simSerial simMode = iota
	// simSI runs each transaction on the snapshot taken at its invocation
	// and commits it at its completion unless a transaction committed since
	// the snapshot appended to a key it appends to (first committer wins):
	// snapshot isolation.
	simSI
	// simBroken is simSI without first-committer-wins, where a commit
	// writes back its snapshot's lists plus its own appends (lost updates),
	// and reads sometimes come from an older snapshot: anything goes.
	simBroken
)

var simNames = [...]string{"serial", "si", "broken"}

func (m simMode) String() string { return simNames[m] }

// genCfg shapes a generated list-append history.
type genCfg struct {
	mode       simMode
	procs      int // concurrent workers
	txns       int
	keys       int
	maxOps     int
	dupProb    float64 // an append reuses a value already appended to its key
	failProb   float64 // a transaction aborts (:fail)
	infoProb   float64 // a transaction's outcome is lost (:info); its worker gets a new process
	openProb   float64 // an invocation left without completion at the end
	uniqueVals bool
	// rotate, when positive, retires a key after that many appends and
	// puts a fresh one in its slot (Jepsen's :max-writes-per-key).
	rotate int
	// json writes elle-cli's JSON rendering instead of EDN (the same
	// history for the same random source).
	json bool
}

type simOp struct {
	read bool
	key  int
	val  int64
	list []int64
}

type simTxn struct {
	proc     int
	ops      []simOp
	snapshot int // commits visible to the transaction
}

// version is one state of a key: its list after commit number seq.
type version struct {
	seq  int
	list []int64
}

type simDB struct {
	versions [][]version // per key, in commit order; versions[k][0] is the empty list
	seq      int         // commits so far
	lastSeq  []int       // per key: commit number of the last writer
}

func (db *simDB) at(k, snapshot int) []int64 {
	vs := db.versions[k]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].seq <= snapshot {
			return vs[i].list
		}
	}
	return nil
}

// generate simulates a database and returns the EDN history clients would
// record. Keys retire after a few appends, as Jepsen's generator does.
func generate(rng *rand.Rand, cfg genCfg) string {
	db := &simDB{}
	var used [][]int64
	var next []int64
	slot := make([]int, cfg.keys) // the key in each slot
	newKey := func() int {
		db.versions = append(db.versions, []version{{seq: 0}})
		db.lastSeq = append(db.lastSeq, 0)
		used = append(used, nil)
		next = append(next, 0)
		return len(db.versions) - 1
	}
	for i := range slot {
		slot[i] = newKey()
	}
	var sb strings.Builder
	index := 0
	emit := func(typ string, proc int, ops []simOp, withReads bool) {
		if cfg.json {
			emitJSON(&sb, typ, proc, ops, withReads, index)
			index++
			return
		}
		fmt.Fprintf(&sb, "{:type :%s, :f :txn, :value [", typ)
		for i, op := range ops {
			if i > 0 {
				sb.WriteByte(' ')
			}
			switch {
			case !op.read:
				fmt.Fprintf(&sb, "[:append %d %d]", op.key, op.val)
			case !withReads:
				fmt.Fprintf(&sb, "[:r %d nil]", op.key)
			default:
				sb.WriteString("[:r " + fmt.Sprint(op.key) + " [")
				for j, x := range op.list {
					if j > 0 {
						sb.WriteByte(' ')
					}
					fmt.Fprint(&sb, x)
				}
				sb.WriteString("]]")
			}
		}
		fmt.Fprintf(&sb, "], :process %d, :time %d, :index %d}\n", proc, index*10, index)
		index++
	}
	procOf := make([]int, cfg.procs)
	for i := range procOf {
		procOf[i] = i
	}
	busy := make([]*simTxn, cfg.procs)
	started := 0
	for started < cfg.txns || anyBusy(busy) {
		w := rng.IntN(cfg.procs)
		if busy[w] == nil {
			if started >= cfg.txns {
				continue
			}
			started++
			tx := &simTxn{proc: procOf[w], snapshot: db.seq}
			if cfg.mode == simBroken && rng.IntN(4) == 0 {
				tx.snapshot = rng.IntN(db.seq + 1)
			}
			for range 1 + rng.IntN(cfg.maxOps) {
				si := rng.IntN(cfg.keys)
				k := slot[si]
				if rng.IntN(2) == 0 {
					tx.ops = append(tx.ops, simOp{read: true, key: k})
					continue
				}
				var v int64
				if len(used[k]) > 0 && !cfg.uniqueVals && rng.Float64() < cfg.dupProb {
					v = used[k][rng.IntN(len(used[k]))]
				} else {
					next[k]++
					v = next[k]
					used[k] = append(used[k], v)
				}
				tx.ops = append(tx.ops, simOp{key: k, val: v})
				if cfg.rotate > 0 && next[k] >= int64(cfg.rotate) {
					slot[si] = newKey()
				}
			}
			busy[w] = tx
			emit("invoke", tx.proc, tx.ops, false)
			continue
		}
		tx := busy[w]
		busy[w] = nil
		if started >= cfg.txns && rng.Float64() < cfg.openProb {
			continue // never completes, never takes effect
		}
		// Execute: reads see the snapshot (or, serially, the latest state)
		// plus the transaction's own appends.
		snap := tx.snapshot
		if cfg.mode == simSerial {
			snap = db.seq
		}
		own := map[int][]int64{}
		for i := range tx.ops {
			op := &tx.ops[i]
			if op.read {
				op.list = append(append([]int64(nil), db.at(op.key, snap)...), own[op.key]...)
			} else {
				own[op.key] = append(own[op.key], op.val)
			}
		}
		conflict := false
		if cfg.mode == simSI {
			for k := range own {
				conflict = conflict || db.lastSeq[k] > snap
			}
		}
		r := rng.Float64()
		switch {
		case conflict || r < cfg.failProb:
			emit("fail", tx.proc, tx.ops, false)
		case r < cfg.failProb+cfg.infoProb:
			if rng.IntN(2) == 0 {
				db.commit(own, snap, cfg.mode == simBroken)
			}
			emit("info", tx.proc, tx.ops, false)
			procOf[w] += cfg.procs
		default:
			db.commit(own, snap, cfg.mode == simBroken)
			emit("ok", tx.proc, tx.ops, true)
		}
	}
	return sb.String()
}

// emitJSON writes one operation as elle-cli's JSON, one object per line.
func emitJSON(sb *strings.Builder, typ string, proc int, ops []simOp, withReads bool, index int) {
	fmt.Fprintf(sb, `{"type":%q,"f":"txn","value":[`, typ)
	for i, op := range ops {
		if i > 0 {
			sb.WriteByte(',')
		}
		switch {
		case !op.read:
			fmt.Fprintf(sb, `["append",%d,%d]`, op.key, op.val)
		case !withReads:
			fmt.Fprintf(sb, `["r",%d,null]`, op.key)
		default:
			fmt.Fprintf(sb, `["r",%d,[`, op.key)
			for j, x := range op.list {
				if j > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprint(sb, x)
			}
			sb.WriteString("]]")
		}
	}
	fmt.Fprintf(sb, `],"process":%d,"time":%d,"index":%d}`+"\n", proc, index*10, index)
}

func anyBusy(b []*simTxn) bool {
	for _, x := range b {
		if x != nil {
			return true
		}
	}
	return false
}

// commit installs a transaction's appends: on the latest list, or (lost
// updates) on the list of its snapshot.
func (db *simDB) commit(own map[int][]int64, snap int, lost bool) {
	db.seq++
	for k, add := range own {
		base := db.versions[k][len(db.versions[k])-1].list
		if lost {
			base = db.at(k, snap)
		}
		l := append(append([]int64(nil), base...), add...)
		db.versions[k] = append(db.versions[k], version{seq: db.seq, list: l})
		db.lastSeq[k] = db.seq
	}
}
