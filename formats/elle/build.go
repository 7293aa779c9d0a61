package elle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// clock says which field of the operation maps gives real time.
type clock uint8

const (
	clockNone clock = iota
	clockIndex
	clockTime
)

var clockNames = [...]string{"none", "index", "time"}

type parser struct {
	name   string
	opt    Options
	syntax Syntax
	ops    []rawOp
	// data is the EDN input, which the :values of ops point into
	// (rawOp.valAt); scratch decodes them again, one or two at a time.
	data    []byte
	scratch fastEDN
	// inv and comp are the micro-operations completeFast read.
	inv, comp []mop
	// mops counts the micro-operations of the completions, where the
	// syntax's reader counted them (0: unknown).
	mops int
	// procNames are the keyword or string processes, by the number
	// numberProcesses gave them.
	procNames map[int64]string
	w         *history.WarningLog
	b         *history.Builder
	workload  Workload
	// workloadLine is where the workload was recognised (0: forced or default).
	workloadLine int
	clock        clock

	// named counts the keys that are not integers, and names the first.
	named     int
	firstName string
	namedSeen map[history.KeyID]bool
	firstLine int

	// ids are the native transaction ids in use that T⊥'s may collide
	// with: those not above 0 (finishHistory).
	ids map[int64]bool
	// empties[k] is 1 + the ValueID of key k's empty list (EmptyList),
	// once a read has interned it (0 before): later reads find it here
	// rather than in the builder's tables, where it costs a cache miss.
	empties []history.ValueID
	sink    uint64 // what addOps' look-ahead loads read, kept so that they stay
	// Appends and writes per version, to warn about repeated values.
	writes    writeCounts
	dupWrites []history.Version
	dupText   [][2]string // key and value as read
	dupPos    []history.Pos
	// dropped counts what lenient reading skipped, for the history.
	dropped history.Dropped
	// preds counts the predicate reads ([:rp …]) and predLine is the
	// first one's line (rows.go).
	preds, predLine int
	// tests interns the value tests of Elle's predicates (elleTest).
	tests map[[3]int64]*history.ValueTest
}

func newParser(name string, opt Options) *parser {
	return &parser{name: name, opt: opt, w: &history.WarningLog{}, ids: map[int64]bool{}}
}

func (p *parser) pos(line int) history.Pos { return history.Pos{File: p.name, Line: line} }

// fail reports a structural error: fatal in strict mode, otherwise a
// warning of the given kind with the recovery appended.
func (p *parser) fail(kind string, line int, recovery, format string, args ...any) error {
	if !p.opt.Lenient {
		return history.Errorf(p.pos(line), format, args...)
	}
	p.warn(kind, p.pos(line), fmt.Sprintf(format, args...)+"; "+recovery)
	switch recovery {
	case "micro-operation dropped":
		p.dropped.Ops++
	case "map skipped", "completion ignored", "value ignored":
		// An operation map or its :value: what it held is not known.
		p.dropped.Other++
	}
	return nil
}

type skipped struct {
	reason string
	count  int
	line   int
}

// opValue returns op's :value (nil if it has none). One the fast path only
// checked is decoded from the input into scratch storage: it is valid
// until the next p.scratch.reset(), which the callers make before each
// transaction's values.
func (p *parser) opValue(op *rawOp) val {
	switch {
	case op.value != nil:
		return *op.value
	case op.valAt > 0:
		return p.scratch.at(p.data, op.valAt)
	}
	return val{}
}

// writeCounts counts the appends and writes of each version, by key and
// value id (both dense), to warn about repeated values: a large history
// has about as many versions as operations, which a map would hold at
// several times the size. A key's first row is cut from shared blocks, so
// that its first values do not each cost an allocation (and a row that
// outgrows it leaves little behind).
type writeCounts struct {
	rows [][]int32
	slab []int32
}

// add counts one more write of v and returns how many there are.
func (c *writeCounts) add(v history.Version) int32 {
	if n := int(v.Key) + 1 - len(c.rows); n > 0 {
		c.rows = append(c.rows, make([][]int32, n)...)
	}
	row := c.rows[v.Key]
	if int(v.Value) >= len(row) {
		row = c.grow(row, int(v.Value)+1)
		c.rows[v.Key] = row
	}
	row[v.Value]++
	return row[v.Value]
}

// slabRow is the longest first row cut from the shared blocks.
const slabRow = 64

// grow returns row extended with zeros to length n.
func (c *writeCounts) grow(row []int32, n int) []int32 {
	if n <= cap(row) {
		return row[:n] // never written beyond len: still zero
	}
	size := max(8, 2*cap(row), n)
	var nr []int32
	if cap(row) == 0 && size <= slabRow {
		if len(c.slab) < size {
			c.slab = make([]int32, 1<<14)
		}
		nr, c.slab = c.slab[:n:size], c.slab[size:]
	} else {
		nr = make([]int32, n, size)
	}
	copy(nr, row)
	return nr
}

// count returns how many writes of v there are.
func (c *writeCounts) count(v history.Version) int32 {
	if int(v.Key) < len(c.rows) && int(v.Value) < len(c.rows[v.Key]) {
		return c.rows[v.Key][v.Value]
	}
	return 0
}

// pend is an invocation waiting for its completion.
type pend struct {
	t   history.TxnID
	inv *rawOp
}

func (p *parser) build() (*history.History, error) {
	p.b = history.NewBuilder(p.name, Format)
	if len(p.ops) == 0 {
		if err := p.fail("empty", 1, "the history is empty", "no operation maps in the file"); err != nil {
			return nil, err
		}
	}
	keep, err := p.classify()
	if err != nil {
		return nil, err
	}
	if keep, err = p.takeInit(keep); err != nil {
		return nil, err
	}
	keep, processless, err := p.sessions(keep)
	if err != nil {
		return nil, err
	}
	p.numberProcesses(keep)
	p.chooseClock(keep)
	useIndex := p.chooseIDs(keep)
	p.detectWorkload(keep)
	if err := p.pair(keep, processless, useIndex); err != nil {
		return nil, err
	}
	return p.finishHistory()
}

// useID notes that a transaction is named id.
func (p *parser) useID(id int64) {
	if id <= 0 {
		p.ids[id] = true
	}
}

// finishHistory adds T⊥ (the empty list, or nil, on every key) and the
// warnings about repeated values. What the lists of a list-append history
// mean is the model's (History.ListFacts), not the reader's.
func (p *parser) finishHistory() (*history.History, error) {
	initID := int64(0)
	for p.ids[initID] {
		initID--
	}
	if err := p.predicateUniverse(); err != nil {
		return nil, err
	}
	p.b.SetInit(history.InitImplicit, initID)
	p.b.InitAllKeys(history.EmptyList)
	for i, kv := range p.dupWrites {
		verb := "appended"
		if p.workload == RWRegister {
			verb = "written"
		}
		p.warn("duplicate-value", p.dupPos[i], fmt.Sprintf("value %s %s %d times to key %s: which of them a read observed is uncertain", p.dupText[i][1], verb, p.writes.count(kv), p.dupText[i][0]))
	}
	if p.named > 0 {
		p.warn("keys", p.pos(p.firstLine), fmt.Sprintf("%d key(s) are not integers (%s, …): kept by name", p.named, p.firstName))
	}
	p.b.Drop(p.dropped)
	p.b.SetMeta("workload", p.workload.String())
	p.b.SetMeta("syntax", p.syntax.String())
	p.b.SetMeta("clock", clockNames[p.clock])
	h := p.b.Finish()
	h.Warnings = append(h.Warnings, p.w.Done()...)
	return h, nil
}

// classify drops maps without a valid :type (E2, E3) and skips, with one
// warning per reason, operations that are not transactions: other :f
// values (the nemesis's, among others), Jepsen's :nemesis process, and
// processes that are neither integers, keywords nor strings.
func (p *parser) classify() ([]int, error) {
	keep := make([]int, 0, len(p.ops))
	var skips []*skipped
	byReason := map[string]*skipped{}
	for i := range p.ops {
		op := &p.ops[i]
		switch op.typeState {
		case 0:
			if err := p.fail("type", op.line, "map skipped", "operation map without :type"); err != nil {
				return nil, err
			}
			continue
		case 2:
			if err := p.fail("type", op.line, "map skipped", "unknown :type %s (want :invoke, :ok, :fail or :info)", op.odd.typeDesc); err != nil {
				return nil, err
			}
			continue
		}
		reason := op.fReason()
		// A keyword describes as itself: ":nemesis" is :nemesis.
		if reason == "" && op.hasProc && (op.procKind != vInt && op.procKind != vKeyword && op.procKind != vString ||
			op.procKind == vKeyword && op.odd.procDesc == ":nemesis") {
			reason = ":process " + op.odd.procDesc
		}
		if reason == "" {
			keep = append(keep, i)
			continue
		}
		s := byReason[reason]
		if s == nil {
			s = &skipped{reason: reason, line: op.line}
			byReason[reason] = s
			skips = append(skips, s)
		}
		s.count++
	}
	for _, s := range skips {
		p.warn("skipped", p.pos(s.line), fmt.Sprintf("%d operation map(s) with %s skipped, the first here: only :txn operations of client processes are transactions", s.count, s.reason))
	}
	return keep, nil
}

// sessions checks :process. A history in which no transaction names its
// process (elle-cli's hand-written samples) is read with each transaction
// as a session of its own, each invocation paired with the next completion.
func (p *parser) sessions(keep []int) ([]int, bool, error) {
	with, without := 0, 0
	first := 0
	for _, i := range keep {
		if p.ops[i].hasProc {
			with++
		} else {
			if without == 0 {
				first = p.ops[i].line
			}
			without++
		}
	}
	if without == 0 {
		return keep, false, nil
	}
	if with == 0 {
		p.warn("process", p.pos(first), "no operation names its :process: each invocation is paired with the next completion and each transaction is a session of its own")
		return keep, true, nil
	}
	out := keep[:0]
	for _, i := range keep {
		if !p.ops[i].hasProc {
			if err := p.fail("process", p.ops[i].line, "map skipped", "operation map without :process (other operations name theirs)"); err != nil {
				return nil, false, err
			}
			continue
		}
		out = append(out, i)
	}
	return out, false, nil
}

// numberProcesses gives each keyword or string :process (Jepsen allows
// them, e.g. :process :a) a number of its own after the largest integer
// one, in order of first appearance, so that it is paired and becomes a
// session like any other; procNames keeps its name for messages.
func (p *parser) numberProcesses(keep []int) {
	top := int64(-1)
	for _, i := range keep {
		if op := &p.ops[i]; op.hasProc && op.procKind == vInt {
			top = max(top, op.proc)
		}
	}
	ids := map[string]int64{}
	for _, i := range keep {
		op := &p.ops[i]
		if !op.hasProc || op.procKind == vInt {
			continue
		}
		name := op.odd.procDesc
		id, ok := ids[name]
		if !ok {
			top++
			id = top
			ids[name] = id
			if p.procNames == nil {
				p.procNames = map[int64]string{}
			}
			p.procNames[id] = name
		}
		op.proc, op.procKind = id, vInt
	}
}

// chooseClock picks :index when every operation has one, else :time when
// every operation has one, else no real time.
func (p *parser) chooseClock(keep []int) {
	if len(keep) == 0 {
		return
	}
	allIndex, allTime, some := true, true, false
	for _, i := range keep {
		op := &p.ops[i]
		allIndex = allIndex && op.hasIndex
		allTime = allTime && op.hasTime
		some = some || op.hasIndex || op.hasTime
	}
	switch {
	case allIndex:
		p.clock = clockIndex
	case allTime:
		p.clock = clockTime
	case some:
		p.warn("clock", p.pos(p.ops[keep[0]].line), "neither :index nor :time is on every operation: no real-time order")
	}
}

// chooseIDs decides whether transactions are named by the :index of their
// invocation (when every operation has a distinct one) or by the position of
// the invocation among the operation maps.
func (p *parser) chooseIDs(keep []int) bool {
	if len(keep) == 0 {
		return false
	}
	seen := map[int64]bool{}
	for _, i := range keep {
		op := &p.ops[i]
		if !op.hasIndex {
			return false
		}
		if op.typ != tInvoke {
			continue
		}
		if seen[op.index] {
			p.warn("index", p.pos(op.line), fmt.Sprintf(":index %d is used twice: transactions are numbered by their position in the file instead", op.index))
			return false
		}
		seen[op.index] = true
	}
	return true
}

// detectWorkload recognises the workload from the first micro-operation
// that tells: :append or a list read (list-append), :w or an integer read
// (rw-register).
func (p *parser) detectWorkload(keep []int) {
	if p.opt.Workload != AutoWorkload {
		p.workload = p.opt.Workload
		return
	}
	// Writes and appends tell first: a read of a vector may be a list or
	// a register's vector value ([:anti 3]). The first read that would
	// tell is kept for a history without them, so that each operation's
	// value is decoded once.
	var byRead Workload
	readLine, seen := 0, false
	for _, i := range keep {
		op := &p.ops[i]
		p.scratch.reset()
		v := p.opValue(op)
		if v.k != vVec {
			continue
		}
		for _, m := range v.elems {
			f, _, arg, ok := mopShape(m)
			switch {
			case f == "append":
				p.workload, p.workloadLine = ListAppend, op.line
				return
			case f == "w" || rowFunc(f):
				p.workload, p.workloadLine = RWRegister, op.line
				return
			case !ok || seen || f != "r":
			case arg.k == vVec:
				byRead, readLine, seen = ListAppend, op.line, true
			case arg.k != vNil:
				byRead, readLine, seen = RWRegister, op.line, true
			}
		}
	}
	if seen {
		p.workload, p.workloadLine = byRead, readLine
		return
	}
	p.workload = ListAppend
}

// procDesc names the process of op for messages: its keyword or string
// if it had one (numberProcesses), else its number.
func (p *parser) procDesc(op *rawOp) string {
	if !op.hasProc {
		return "(no :process)"
	}
	if name, ok := p.procNames[op.proc]; ok {
		return "process " + name
	}
	return fmt.Sprintf("process %d", op.proc)
}

// pair walks the operations in file order, opening a transaction at each
// :invoke and completing it at the next completion of the same process.
//
// A process may invoke again while an earlier invocation is pending (a
// client that does not wait, or a log that lost a completion). Elle accepts
// that except for real-time models, whose pair index refuses it: its process
// order and its analyses use the completions alone. So completions pair
// with the pending invocations of their process in order, the first with
// the oldest, and the history has no real-time order.
func (p *parser) pair(keep []int, processless, useIndex bool) error {
	pending := map[int64][]pend{}
	infoLine := map[int64]int{}
	var never []pend
	// A history of completions only (as Elle's own tests and many stored
	// analyses write them) has each completion stand for its whole
	// transaction. When it was invoked is unknown, so there is no real
	// time.
	completionsOnly := len(keep) > 0 && !slices.ContainsFunc(keep, func(i int) bool { return p.ops[i].typ == tInvoke })
	if completionsOnly {
		p.warn("completions-only", p.pos(p.ops[keep[0]].line), "no :invoke in the history: each completion is a whole transaction, and without invocation times there is no real-time order")
		p.clock = clockNone
	} else if !processless {
		p.overlapping(keep)
	}
	txns := 0
	for _, i := range keep {
		if p.ops[i].typ == tInvoke || completionsOnly {
			txns++
		}
	}
	// A micro-operation takes at least 8 bytes ([:r 1 1]): a :value of
	// anything shorter reserves no more than the input could hold.
	p.b.Reserve(txns, min(p.mops, len(p.data)/8))
	for _, i := range keep {
		op := &p.ops[i]
		proc := op.proc
		if processless {
			proc = 0
		}
		if op.typ == tInvoke || completionsOnly {
			if pds := pending[proc]; len(pds) > 0 && processless {
				if err := p.fail("pairing", op.line, "the earlier invocation is taken as never completed",
					"second :invoke on %s while its :invoke at line %d is still pending", p.procDesc(op), pds[0].inv.line); err != nil {
					return err
				}
				delete(pending, proc)
				never = append(never, pds...)
			}
			id := int64(op.ord)
			if useIndex {
				id = op.index
			}
			sid := proc
			if processless {
				sid = id
			}
			if l, ok := infoLine[proc]; ok && !processless {
				p.warn("reused-process", p.pos(op.line), fmt.Sprintf("process %d invokes again after its :info completion at line %d; Jepsen gives a crashed process a new id, so this is kept in the same session", proc, l))
				delete(infoLine, proc)
			}
			p.useID(id)
			t := p.b.Begin(p.b.Session(sid), id, history.Unknown, p.pos(op.line))
			if completionsOnly {
				if err := p.complete(pend{t: t, inv: op}, op); err != nil {
					return err
				}
				continue
			}
			pending[proc] = append(pending[proc], pend{t: t, inv: op})
			continue
		}
		pds := pending[proc]
		if len(pds) == 0 {
			if err := p.fail("pairing", op.line, "completion ignored", ":%s completion on %s with no pending :invoke", opTypeNames[op.typ], p.procDesc(op)); err != nil {
				return err
			}
			continue
		}
		pd := pds[0]
		if len(pds) == 1 {
			delete(pending, proc)
		} else {
			pending[proc] = pds[1:]
		}
		if op.typ == tInfo {
			infoLine[proc] = op.line
		}
		if err := p.complete(pd, op); err != nil {
			return err
		}
	}
	for _, pds := range pending {
		never = append(never, pds...)
	}
	slices.SortFunc(never, func(a, b pend) int { return int(a.t - b.t) })
	for i, pd := range never {
		if i == 0 {
			p.warn("never-completed", p.pos(pd.inv.line), fmt.Sprintf("%d invocation(s) never completed, the first here: their outcome is unknown", len(never)))
		}
		p.scratch.reset()
		if err := p.addOps(pd.t, p.opValue(pd.inv), pd.inv.line, false); err != nil {
			return err
		}
		p.interval(pd.t, pd.inv, nil)
	}
	return nil
}

// overlapping finds the first :invoke of a process that still has one
// pending: with it the history has no real-time order (Elle's pair index
// refuses such a history for real-time models), which the warning says.
func (p *parser) overlapping(keep []int) {
	open := map[int64]int{} // process -> line of its oldest pending :invoke
	depth := map[int64]int{}
	for _, i := range keep {
		op := &p.ops[i]
		proc := op.proc
		if op.typ == tInvoke {
			if depth[proc] > 0 {
				p.warn("pairing", p.pos(op.line), fmt.Sprintf(":invoke on %s while its :invoke at line %d is still pending: completions are paired with its invocations in order, and there is no real-time order (Elle refuses such a history for real-time models, strict-serializable included)", p.procDesc(op), open[proc]))
				p.clock = clockNone
				return
			}
			depth[proc]++
			open[proc] = op.line
		} else if depth[proc] > 0 {
			depth[proc]--
		}
	}
}

// complete applies a completion to its transaction.
func (p *parser) complete(pd pend, op *rawOp) error {
	if !forceGeneral {
		if done, err := p.completeFast(pd, op); done {
			return err
		}
	}
	t := pd.t
	p.scratch.reset()
	inv, comp := p.opValue(pd.inv), p.opValue(op)
	switch op.typ {
	case tOK:
		if !op.hasValue || comp.k == vNil {
			if err := p.fail("value", op.line, "taken as :info", ":ok completion without :value"); err != nil {
				return err
			}
			if err := p.addOps(t, inv, pd.inv.line, false); err != nil {
				return err
			}
			p.interval(t, pd.inv, nil)
			return nil
		}
		p.b.SetStatus(t, history.Committed)
		p.compare(inv, comp, pd.inv.line, op.line)
		if err := p.addOps(t, comp, op.line, true); err != nil {
			return err
		}
		p.interval(t, pd.inv, op)
	case tFail:
		p.b.SetStatus(t, history.Aborted)
		src, line := inv, pd.inv.line
		if comp.k == vVec {
			src, line = comp, op.line
		}
		if err := p.addOps(t, src, line, false); err != nil {
			return err
		}
		p.interval(t, pd.inv, op)
	case tInfo:
		src, line := inv, pd.inv.line
		if comp.k == vVec {
			src, line = comp, op.line
		}
		if err := p.addOps(t, src, line, false); err != nil {
			return err
		}
		p.interval(t, pd.inv, nil)
	}
	return nil
}

// interval records t's real-time interval; a transaction without a
// definite completion (comp == nil) may take effect at any later time.
func (p *parser) interval(t history.TxnID, inv, comp *rawOp) {
	at := func(op *rawOp) int64 {
		if p.clock == clockIndex {
			return op.index
		}
		return op.time
	}
	if p.clock == clockNone {
		return
	}
	start, end := at(inv), int64(int64Max)
	if comp != nil {
		end = at(comp)
		if end < start {
			p.warn("clock", p.pos(comp.line), fmt.Sprintf("completion at :%s %d precedes its invocation at %d (line %d): no real-time interval for this transaction", clockNames[p.clock], end, start, inv.line))
			return
		}
	}
	p.b.SetInterval(t, start, end)
}

// warn records a pre-formatted warning of the given kind. A "syntax"
// warning whose message ends in a skip (decode.go, veristrong.go) dropped
// input whose content is not known.
func (p *parser) warn(kind string, pos history.Pos, msg string) {
	p.w.Add(kind, pos, "%s", msg)
	if kind == "syntax" && (strings.HasSuffix(msg, "skipped") || strings.HasSuffix(msg, "skipped to the next line") ||
		strings.HasSuffix(msg, "the rest of the file is ignored")) {
		p.dropped.Other++
	}
}
