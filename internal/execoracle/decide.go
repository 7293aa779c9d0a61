package execoracle

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Execution is a witness that a history satisfies a level. Sets are bit
// sets over transaction indices (bit i = h.Txns[i]); T⊥ is in every visible
// set and in none of these.
type Execution struct {
	// Committed[i] says whether transaction i is in C.
	Committed []bool
	// Order is AR over C, T⊥ left out.
	Order []int
	// Vis[i] is VIS(i) for i in C.
	Vis []uint32
	// ReadVis[i][j], for a transaction i at RC or RR, is V(α) of its
	// operation j when that is a read that looks at the store (0 otherwise);
	// for a predicate read, the union of the sets it observed its rows with
	// and of the previous read's set.
	ReadVis [][]uint32
}

// readEv is a read whose value comes from the store: a register or row
// read with no own earlier write of its key, a list read (less its own
// appends), or a predicate read (less the keys it wrote before).
type readEv struct {
	op     int
	list   bool
	key    int     // dense key index
	val    int64   // register or row value expected
	absent bool    // a row read that found the row unborn or deleted
	ext    []int64 // list: expected state before the reader's own appends
	// A predicate read: the row keys it observes in the store, and for
	// each whether it returned it (pin) and with what value.
	pred *Predicate
	pk   []int
	pin  []bool
	pval []int64
}

// prepared holds the per-transaction facts of a history at one level.
type prepared struct {
	h       *History
	n       int
	lvl     []Level  // each transaction's level (StrictSER kept: it adds RT)
	so      []uint32 // session predecessors (any status)
	rt      []uint32 // real-time predecessors to respect (strict-ser only)
	confl   []uint32 // transactions writing a key this one writes
	regW    []uint32 // per register or row key: its writers (deleters too)
	final   [][]int64
	gone    []uint64 // per transaction: the rows it leaves deleted
	rowKey  uint64   // the row keys: they start unborn, registers at 0
	keys    []int64  // dense key index → key
	app     []uint32 // per list key: its appenders
	block   [][][]int64
	reads   [][]readEv
	intErr  []string // non-empty: a read of this transaction fails INT
	unknown []int
	commit  uint32
}

func allLevel(l Level) bool { return l >= RC && l <= StrictSER || l == RR }

func prepare(h *History, level, def Level) (*prepared, error) {
	n := len(h.Txns)
	if n > MaxTxns {
		return nil, fmt.Errorf("execoracle: %d transactions, at most %d", n, MaxTxns)
	}
	if level == Mixed {
		if !allLevel(def) {
			return nil, fmt.Errorf("execoracle: default level %v is not a level", def)
		}
	} else if !allLevel(level) {
		return nil, fmt.Errorf("execoracle: level %v is not a level", level)
	}
	p := &prepared{h: h, n: n, lvl: make([]Level, n), so: make([]uint32, n), rt: make([]uint32, n),
		confl: make([]uint32, n), final: make([][]int64, n), block: make([][][]int64, n),
		reads: make([][]readEv, n), intErr: make([]string, n), gone: make([]uint64, n)}
	// Dense keys, each a register, a list or a row.
	keyIdx, isList, isRow, err := classify(h)
	if err != nil {
		return nil, err
	}
	nk := len(isList)
	p.keys = make([]int64, nk)
	for key, k := range keyIdx {
		p.keys[k] = key
		if isRow[k] {
			p.rowKey |= 1 << k
		}
	}
	p.regW = make([]uint32, nk)
	p.app = make([]uint32, nk)
	end := func(t *Txn) int64 {
		if t.Status == Unknown {
			return math.MaxInt64
		}
		return t.End
	}
	writes := make([]uint64, n) // keys written or appended, as a bit set (≤ 64 keys used)
	if nk > 64 {
		return nil, fmt.Errorf("execoracle: %d keys, at most 64", nk)
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		l := level
		if level == Mixed {
			l = t.Level
			if l == LevelNone {
				l = def
			}
			if !allLevel(l) && t.Status != Aborted {
				return nil, fmt.Errorf("execoracle: transaction %d has level %v", i, l)
			}
		}
		p.lvl[i] = l
		switch t.Status {
		case Committed:
			p.commit |= 1 << i
		case Unknown:
			p.unknown = append(p.unknown, i)
		case Aborted:
		default:
			return nil, fmt.Errorf("execoracle: transaction %d has status %d", i, t.Status)
		}
		if t.Timed && t.Start > end(t) {
			return nil, fmt.Errorf("execoracle: transaction %d ends before it starts", i)
		}
		for j := range i {
			if h.Txns[j].Session == t.Session {
				p.so[i] |= 1 << j
			}
		}
		p.final[i] = make([]int64, nk)
		p.block[i] = make([][]int64, nk)
		for j, op := range t.Ops {
			k := keyIdx[op.Key]
			switch op.Kind {
			case Write, Insert:
				p.final[i][k] = op.Value
				p.gone[i] &^= 1 << k
				p.regW[k] |= 1 << i
				writes[i] |= 1 << k
			case Delete:
				p.gone[i] |= 1 << k
				p.regW[k] |= 1 << i
				writes[i] |= 1 << k
			case Append:
				p.block[i][k] = append(p.block[i][k], op.Value)
				p.app[k] |= 1 << i
				writes[i] |= 1 << k
			case Read, ReadAbsent:
				absent := op.Kind == ReadAbsent
				if writes[i]&(1<<k) != 0 {
					gone := p.gone[i]&(1<<k) != 0
					if (absent != gone || !absent && op.Value != p.final[i][k]) && p.intErr[i] == "" {
						own := fmt.Sprint(p.final[i][k])
						if gone {
							own = "a delete"
						}
						p.intErr[i] = fmt.Sprintf("op %d %v: own latest write is %s", j, op, own)
					}
					continue
				}
				p.reads[i] = append(p.reads[i], readEv{op: j, key: k, val: op.Value, absent: absent})
			case PredRead:
				if r, msg := p.predRead(i, j, op, writes[i]); msg != "" {
					if p.intErr[i] == "" {
						p.intErr[i] = msg
					}
				} else {
					p.reads[i] = append(p.reads[i], r)
				}
			case ReadList:
				own := p.block[i][k]
				m := len(op.List) - len(own)
				if m < 0 || !slices.Equal(op.List[m:], own) {
					if p.intErr[i] == "" {
						p.intErr[i] = fmt.Sprintf("op %d %v: does not end with its own appends %s", j, op, listString(own, " "))
					}
					continue
				}
				p.reads[i] = append(p.reads[i], readEv{op: j, list: true, key: k, ext: op.List[:m]})
			default:
				return nil, fmt.Errorf("execoracle: transaction %d op %d has kind %d", i, j, op.Kind)
			}
		}
	}
	for i := range h.Txns {
		for j := range h.Txns {
			if i != j && writes[i]&writes[j] != 0 {
				p.confl[i] |= 1 << j
			}
			ti, tj := &h.Txns[i], &h.Txns[j]
			if i != j && ti.Timed && tj.Timed && end(tj) < ti.Start &&
				(level == StrictSER || level == Mixed && p.lvl[i] == StrictSER) {
				p.rt[i] |= 1 << j
			}
		}
	}
	return p, nil
}

// classify gives every key of h a dense index and a kind: a list (appended
// to or read as a list), a row (inserted, deleted, read as absent, returned
// by a predicate read, or in the key range of one), or else a register.
func classify(h *History) (keyIdx map[int64]int, isList, isRow []bool, err error) {
	keyIdx = map[int64]int{}
	var preds []*Predicate
	add := func(key int64, list, row bool) {
		k, ok := keyIdx[key]
		if !ok {
			k = len(isList)
			keyIdx[key] = k
			isList = append(isList, false)
			isRow = append(isRow, false)
		}
		isList[k] = isList[k] || list
		isRow[k] = isRow[k] || row
	}
	var isReg []bool
	for i, t := range h.Txns {
		for j, op := range t.Ops {
			switch op.Kind {
			case Write, Read, Append, ReadList, Insert, Delete, ReadAbsent:
				l := op.Kind == Append || op.Kind == ReadList
				add(op.Key, l, op.Kind == Insert || op.Kind == Delete || op.Kind == ReadAbsent)
				for len(isReg) < len(isList) {
					isReg = append(isReg, false)
				}
				k := keyIdx[op.Key]
				isReg[k] = isReg[k] || op.Kind == Write || op.Kind == Read
				if isList[k] && isReg[k] {
					return nil, nil, nil, fmt.Errorf("execoracle: key %d is both a register and a list (txn %d op %d)", op.Key, i, j)
				}
			case PredRead:
				if op.Pred == nil {
					return nil, nil, nil, fmt.Errorf("execoracle: txn %d op %d: a predicate read without a predicate", i, j)
				}
				preds = append(preds, op.Pred)
				for _, r := range op.Rows {
					add(r.Key, false, true)
				}
			default:
				return nil, nil, nil, fmt.Errorf("execoracle: transaction %d op %d has kind %d", i, j, op.Kind)
			}
		}
	}
	for key, k := range keyIdx {
		for _, pr := range preds {
			if pr.Covers(key) {
				isRow[k] = true
			}
		}
		if isList[k] && isRow[k] {
			return nil, nil, nil, fmt.Errorf("execoracle: key %d is both a list and a row", key)
		}
	}
	return keyIdx, isList, isRow, nil
}

// predRead prepares predicate read j of transaction i (whose keys written
// so far are own): the rows it must return from its own writes, and the
// row keys it observes in the store. A non-empty message means the read
// can return what it did in no execution.
func (p *prepared) predRead(i, j int, op Op, own uint64) (readEv, string) {
	r := readEv{op: j, pred: op.Pred}
	ret := map[int64]int64{}
	for _, row := range op.Rows {
		if _, dup := ret[row.Key]; dup {
			return r, fmt.Sprintf("op %d %v: returns row %d twice", j, op, row.Key)
		}
		if !op.Pred.Match(row.Key, row.Value) {
			return r, fmt.Sprintf("op %d %v: returns (%d,%d), which does not match", j, op, row.Key, row.Value)
		}
		ret[row.Key] = row.Value
	}
	for k, key := range p.keys {
		if p.rowKey&(1<<k) == 0 || !op.Pred.Covers(key) {
			continue
		}
		v, in := ret[key]
		if own&(1<<k) != 0 {
			live := p.gone[i]&(1<<k) == 0
			match := live && op.Pred.Match(key, p.final[i][k])
			if match != in || in && v != p.final[i][k] {
				return r, fmt.Sprintf("op %d %v: disagrees with its own write of row %d", j, op, key)
			}
			continue
		}
		r.pk = append(r.pk, k)
		r.pin = append(r.pin, in)
		r.pval = append(r.pval, v)
	}
	return r, ""
}

// version is the version of key k that w installed (w < 0: T⊥'s): live
// with a value, or not live (unborn or deleted).
func (p *prepared) version(w, k int) (live bool, val int64) {
	if w < 0 {
		return p.rowKey&(1<<k) == 0, 0
	}
	return p.gone[w]&(1<<k) == 0, p.final[w][k]
}

// search is the depth-first search over one choice of C.
type search struct {
	p       *prepared
	inC     uint32
	placed  uint32
	order   []int
	pos     [MaxTxns]int
	vis     [MaxTxns]uint32
	readVis [MaxTxns][]uint32
	fixed   []int // Replay: the order to follow
	// deepest failure, for Replay's message
	failDepth int
	failMsg   string
}

// option is one way to place a transaction: its VIS and, at RC, the V(α)
// of each of its store reads.
type option struct {
	vis   uint32
	reads []uint32
}

// Decide reports whether h satisfies level (Mixed: each transaction at its
// own level, def for those without one). It returns a witness execution, or
// nil if none exists; an error means h or the levels are malformed.
func Decide(h *History, level, def Level) (*Execution, error) {
	p, err := prepare(h, level, def)
	if err != nil {
		return nil, err
	}
	for mask := 0; mask < 1<<len(p.unknown); mask++ {
		inC := p.commit
		for b, u := range p.unknown {
			if mask&(1<<b) != 0 {
				inC |= 1 << u
			}
		}
		if p.intFailure(inC) != "" {
			continue
		}
		s := &search{p: p, inC: inC}
		if s.dfs() {
			return s.execution(), nil
		}
	}
	return nil, nil
}

// Satisfies is Decide without the witness.
func Satisfies(h *History, level, def Level) (bool, error) {
	e, err := Decide(h, level, def)
	return e != nil, err
}

// Replay reports whether order (AR over the transactions taken as
// committed, T⊥ left out) extends to an execution of h at level: nil if
// some visible sets satisfy every axiom and reproduce every read, else an
// error naming what fails.
func Replay(h *History, level, def Level, order []int) error {
	p, err := prepare(h, level, def)
	if err != nil {
		return err
	}
	var inC uint32
	for _, t := range order {
		if t < 0 || t >= p.n {
			return fmt.Errorf("order names transaction %d of %d", t, p.n)
		}
		if inC&(1<<t) != 0 {
			return fmt.Errorf("order names transaction %d twice", t)
		}
		if h.Txns[t].Status == Aborted {
			return fmt.Errorf("order names aborted transaction %d", t)
		}
		inC |= 1 << t
	}
	if miss := p.commit &^ inC; miss != 0 {
		return fmt.Errorf("order leaves out committed transaction %d", bits.TrailingZeros32(miss))
	}
	if msg := p.intFailure(inC); msg != "" {
		return errors.New(msg)
	}
	var seen uint32
	for _, t := range order {
		if miss := (p.so[t] | p.rt[t]) & inC &^ seen; miss != 0 {
			u := bits.TrailingZeros32(miss)
			why := "session"
			if p.so[t]&(1<<u) == 0 {
				why = "real-time"
			}
			return fmt.Errorf("order puts transaction %d before its %s predecessor %d", t, why, u)
		}
		seen |= 1 << t
	}
	s := &search{p: p, inC: inC, fixed: order, failDepth: -1}
	if s.dfs() {
		return nil
	}
	return errors.New(s.failMsg)
}

// intFailure describes a transaction of inC whose reads fail INT.
func (p *prepared) intFailure(inC uint32) string {
	for i := range p.n {
		if inC&(1<<i) != 0 && p.intErr[i] != "" {
			return fmt.Sprintf("transaction %d: %s", i, p.intErr[i])
		}
	}
	return ""
}

func (s *search) execution() *Execution {
	e := &Execution{Committed: make([]bool, s.p.n), Order: slices.Clone(s.order), Vis: make([]uint32, s.p.n), ReadVis: make([][]uint32, s.p.n)}
	for i := range s.p.n {
		e.Committed[i] = s.inC&(1<<i) != 0
		e.Vis[i] = s.vis[i]
		if s.readVis[i] != nil {
			rv := make([]uint32, len(s.p.h.Txns[i].Ops))
			for j, r := range s.p.reads[i] {
				rv[r.op] = s.readVis[i][j]
			}
			e.ReadVis[i] = rv
		}
	}
	return e
}

func (s *search) dfs() bool {
	if s.placed == s.inC {
		return true
	}
	d := len(s.order)
	cands := s.inC &^ s.placed
	if s.fixed != nil {
		cands = 1 << s.fixed[d]
	}
	for c := cands; c != 0; c &= c - 1 {
		t := bits.TrailingZeros32(c)
		if (s.p.so[t]|s.p.rt[t])&s.inC&^s.placed != 0 {
			continue
		}
		opts := s.options(t)
		if len(opts) == 0 && s.fixed != nil && d > s.failDepth {
			s.failDepth = d
			s.failMsg = s.explain(t)
		}
		for _, o := range opts {
			s.pos[t] = d
			s.vis[t] = o.vis
			s.readVis[t] = o.reads
			s.order = append(s.order, t)
			s.placed |= 1 << t
			if s.dfs() {
				return true
			}
			s.placed &^= 1 << t
			s.order = s.order[:d]
		}
	}
	return false
}

// options lists the inclusion-minimal visible sets (with their per-read
// sets at RC) under which t, placed next, meets its axioms and reads.
func (s *search) options(t int) []option {
	p := s.p
	pl := s.placed
	l := p.lvl[t]
	base := p.so[t] & s.inC // SESSION (and an RC transaction's own VIS)
	if l == PSI || l == SI {
		base |= p.confl[t] & pl
	}
	var found []option
	switch {
	case l == SER || l == StrictSER:
		if s.readsOK(t, pl) {
			found = append(found, option{vis: pl})
		}
	case l == PC || l == SI:
		// PREFIX: VIS is a prefix of AR; the shortest holding base first.
		var pre uint32
		for k := 0; k <= len(s.order); k++ {
			if k > 0 {
				pre |= 1 << s.order[k-1]
			}
			if base&^pre == 0 && s.readsOK(t, pre) {
				found = append(found, option{vis: pre})
				break // every longer prefix is a superset
			}
		}
	case l == RC:
		found = s.chainOptions(t, base, false)
	case l == RR:
		found = s.chainOptions(t, 0, true)
	default: // RA, CC, PSI
		free := pl &^ base
		for sub := free; ; sub = (sub - 1) & free {
			v := base | sub
			if s.axiomsOK(t, l, v) && s.readsOK(t, v) {
				found = append(found, option{vis: v})
			}
			if sub == 0 {
				break
			}
		}
	}
	return minimal(found)
}

// axiomsOK checks TRANSVis for RA, CC and PSI candidates (SESSION and
// NoConflict are in the base already).
func (s *search) axiomsOK(t int, l Level, v uint32) bool {
	if l != CC && l != PSI {
		return true
	}
	for c := v; c != 0; c &= c - 1 {
		u := bits.TrailingZeros32(c)
		if s.vis[u]&^v != 0 {
			return false
		}
	}
	return true
}

func (s *search) readsOK(t int, v uint32) bool {
	for i := range s.p.reads[t] {
		if !s.readOK(&s.p.reads[t][i], v) {
			return false
		}
	}
	return true
}

// latest returns the AR-latest placed member of m, or -1.
func (s *search) latest(m uint32) int {
	for d := len(s.order) - 1; d >= 0; d-- {
		if m&(1<<s.order[d]) != 0 {
			return s.order[d]
		}
	}
	return -1
}

// readOK says whether read r returns its value when its reader sees v.
func (s *search) readOK(r *readEv, v uint32) bool {
	p := s.p
	if r.pred != nil {
		for i := range r.pk {
			if !s.keyOK(r, i, v) {
				return false
			}
		}
		return true
	}
	if !r.list {
		live, val := p.version(s.latest(v&p.regW[r.key]), r.key)
		if r.absent {
			return !live
		}
		return live && val == r.val
	}
	w := s.latest(v & p.app[r.key])
	if w < 0 {
		return len(r.ext) == 0
	}
	// The state after w: every appender up to w, in AR order; all visible.
	e := r.ext
	for d := 0; d <= s.pos[w]; d++ {
		u := s.order[d]
		if p.app[r.key]&(1<<u) == 0 {
			continue
		}
		if v&(1<<u) == 0 {
			return false
		}
		b := p.block[u][r.key]
		if len(e) < len(b) || !slices.Equal(e[:len(b)], b) {
			return false
		}
		e = e[len(b):]
	}
	return len(e) == 0
}

// keyOK says whether predicate read r observes its i-th key as it returned
// it (a row it returned, or one that does not match) when it sees v.
func (s *search) keyOK(r *readEv, i int, v uint32) bool {
	p := s.p
	k := r.pk[i]
	live, val := p.version(s.latest(v&p.regW[k]), k)
	m := live && r.pred.Match(p.keys[k], val)
	return m == r.pin[i] && (!m || val == r.pval[i])
}

// itemOK is RR's rule for a point read (register, row or list): it
// observes its key at its version in VIS(T), all of the placed
// transactions, so the AR-latest placed writer of the key, if any, is in v.
// (chainOptions applies the same rule to the rows a predicate read returns.)
func (s *search) itemOK(r *readEv, v uint32) bool {
	writers := s.p.regW[r.key]
	if r.list {
		writers = s.p.app[r.key]
	}
	w := s.latest(s.placed & writers)
	return w < 0 || v&(1<<w) != 0
}
