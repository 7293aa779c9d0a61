package execoracle

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Status is a transaction's recorded outcome.
type Status uint8

// The outcomes.
const (
	Committed Status = iota
	Aborted
	Unknown
)

// Level is an isolation level. LevelNone on a transaction means "the
// default"; Mixed, asked of Decide, means "each transaction at its own".
type Level uint8

// The levels, weakest first (PC and PSI are incomparable), then Mixed,
// then RR, which came later and keeps the others' numbers: RR lies between
// RC and SER and is incomparable with RA, CC, PC, PSI and SI (doc.go).
const (
	LevelNone Level = iota
	RC
	RA
	CC
	PC
	PSI
	SI
	SER
	StrictSER
	Mixed
	RR // repeatable read, Adya's PL-2.99 (doc.go, "Repeatable read")
)

var levelNames = [...]string{"", "rc", "ra", "cc", "pc", "psi", "si", "ser", "strict-ser", "mixed", "rr"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", l)
}

// ParseLevel reads a level's lower-case name, as in hyperiso's JSONL.
func ParseLevel(s string) (Level, bool) {
	for i, n := range levelNames {
		if n == s && i != 0 {
			return Level(i), true
		}
	}
	return LevelNone, false
}

// OpKind says what an operation does.
type OpKind uint8

// The operations. Write and Read also act on rows (doc.go, "Rows"): a
// write of a row is an update (or an upsert), a read finds it live.
const (
	Write      OpKind = iota // w(k,v) on a register or a row
	Read                     // r(k)=v on a register, or of a live row
	Append                   // append(k,v) to a list
	ReadList                 // r(k)=[v1..vn] of a list
	Insert                   // insert(k,v) of a row: the same effect as w(k,v)
	Delete                   // delete(k) of a row
	ReadAbsent               // r(k)=absent: the row is unborn or deleted
	PredRead                 // select(P)={(k,v)...}: the rows that match P
)

// Op is one operation. Value is used by Write, Read, Append and Insert;
// List by ReadList; Pred and Rows by PredRead (Rows in any order).
type Op struct {
	Kind  OpKind
	Key   int64
	Value int64
	List  []int64
	Pred  *Predicate
	Rows  []Row
}

// Row is one (key, value) pair that a predicate read returned.
type Row struct{ Key, Value int64 }

// Predicate is what a predicate read selects: the rows whose key lies in
// [Lo, Hi) and whose value passes the value test. The value test is the
// conjunction of In (when non-nil: the value is one of In), [VLo, VHi)
// (when VLo < VHi) and "value mod Mod = Rem" (when Mod != 0; the remainder
// has Mod's sign, as Clojure's mod in Elle's [:mod m r]). The key range also declares the read's universe: every
// key in it is a row (doc.go, "Rows").
//
// Match is the only place the oracle looks at a predicate, so a new kind
// of predicate (any test of a key and a value) is a new field here.
type Predicate struct {
	Lo, Hi   int64
	In       []int64
	VLo, VHi int64
	Mod, Rem int64
}

// Covers says whether k is in the predicate's key range.
func (p *Predicate) Covers(k int64) bool { return p.Lo <= k && k < p.Hi }

// Match says whether the live row (k, v) matches the predicate.
func (p *Predicate) Match(k, v int64) bool {
	if !p.Covers(k) {
		return false
	}
	if p.In != nil && !slices.Contains(p.In, v) {
		return false
	}
	if p.Mod != 0 {
		r := v % p.Mod
		if r*p.Mod < 0 { // r's sign differs from Mod's (values are small)
			r += p.Mod
		}
		if r != p.Rem {
			return false
		}
	}
	return p.VLo >= p.VHi || p.VLo <= v && v < p.VHi
}

// Range is the predicate "key in [lo, hi)", any value.
func Range(lo, hi int64) *Predicate { return &Predicate{Lo: lo, Hi: hi} }

// W, R, A and L build operations.
func W(k, v int64) Op           { return Op{Kind: Write, Key: k, Value: v} }
func R(k, v int64) Op           { return Op{Kind: Read, Key: k, Value: v} }
func A(k, v int64) Op           { return Op{Kind: Append, Key: k, Value: v} }
func L(k int64, vs ...int64) Op { return Op{Kind: ReadList, Key: k, List: append([]int64{}, vs...)} }

// I, D, N and P build row operations: insert(k,v), delete(k),
// r(k)=absent, and a predicate read of p returning the rows given as
// key, value pairs (P(Range(0, 10), 3, 30, 5, 50) returned (3,30), (5,50)).
func I(k, v int64) Op { return Op{Kind: Insert, Key: k, Value: v} }
func D(k int64) Op    { return Op{Kind: Delete, Key: k} }
func N(k int64) Op    { return Op{Kind: ReadAbsent, Key: k} }
func P(p *Predicate, kv ...int64) Op {
	if len(kv)%2 != 0 {
		panic("execoracle.P: key, value pairs")
	}
	rows := []Row{}
	for i := 0; i < len(kv); i += 2 {
		rows = append(rows, Row{kv[i], kv[i+1]})
	}
	return Op{Kind: PredRead, Pred: p, Rows: rows}
}

// Txn is one transaction. Its place in its session is its place among the
// transactions of History.Txns with the same Session. Start and End are
// meaningful when Timed; a transaction of unknown status should have End =
// math.MaxInt64 (it precedes nothing in real time).
type Txn struct {
	Session    int
	Status     Status
	Level      Level
	Timed      bool
	Start, End int64
	Ops        []Op
}

// History is a list of transactions; T⊥ is implicit (every register 0,
// every list empty) and precedes them all.
type History struct {
	Txns []Txn
}

// MaxTxns is the most transactions a history may have (bit sets are uint32,
// and the search is exponential well before that).
const MaxTxns = 16

// JSONL writes h in hyperiso's native format, one line per transaction in
// index order, so hyperiso's transaction t (1-based) is index t-1.
func (h *History) JSONL() []byte {
	var b bytes.Buffer
	b.WriteString(`{"hyperiso":1,"init":"zero"}` + "\n")
	for i, t := range h.Txns {
		fmt.Fprintf(&b, `{"session":%d,"id":%d`, t.Session, i+1)
		switch t.Status {
		case Aborted:
			b.WriteString(`,"status":"aborted"`)
		case Unknown:
			b.WriteString(`,"status":"unknown"`)
		}
		if t.Level != LevelNone && t.Level != Mixed {
			fmt.Fprintf(&b, `,"level":%q`, t.Level.String())
		}
		if t.Timed {
			end := t.End
			if t.Status == Unknown {
				end = math.MaxInt64
			}
			fmt.Fprintf(&b, `,"time":[%d,%d]`, t.Start, end)
		}
		b.WriteString(`,"ops":[`)
		for j, op := range t.Ops {
			if j > 0 {
				b.WriteByte(',')
			}
			switch op.Kind {
			case Write:
				fmt.Fprintf(&b, `["w",%d,%d]`, op.Key, op.Value)
			case Read:
				fmt.Fprintf(&b, `["r",%d,%d]`, op.Key, op.Value)
			case Append:
				fmt.Fprintf(&b, `["append",%d,%d]`, op.Key, op.Value)
			case ReadList:
				fmt.Fprintf(&b, `["r",%d,%s]`, op.Key, listString(op.List, ","))
			case Insert:
				fmt.Fprintf(&b, `["insert",%d,%d]`, op.Key, op.Value)
			case Delete:
				fmt.Fprintf(&b, `["delete",%d]`, op.Key)
			case ReadAbsent:
				fmt.Fprintf(&b, `["r",%d,null]`, op.Key)
			case PredRead:
				b.WriteString(`["select",` + op.Pred.jsonl() + `,[`)
				for i, r := range sortedRows(op.Rows) {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `[%d,%d]`, r.Key, r.Value)
				}
				b.WriteString(`]]`)
			}
		}
		b.WriteString("]}\n")
	}
	return b.Bytes()
}

func listString(l []int64, sep string) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range l {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// jsonl is the predicate in the proposed JSONL syntax (docs/predicates.md):
// {"keys":[lo,hi]} plus "in":[v...] and "values":[vlo,vhi] when present.
func (p *Predicate) jsonl() string {
	s := fmt.Sprintf(`{"keys":[%d,%d]`, p.Lo, p.Hi)
	if p.In != nil {
		s += `,"in":` + listString(p.In, ",")
	}
	if p.VLo < p.VHi {
		s += fmt.Sprintf(`,"values":[%d,%d]`, p.VLo, p.VHi)
	}
	if p.Mod != 0 {
		s += fmt.Sprintf(`,"mod":[%d,%d]`, p.Mod, p.Rem)
	}
	return s + "}"
}

func (p *Predicate) String() string {
	s := fmt.Sprintf("[%d,%d)", p.Lo, p.Hi)
	if p.In != nil {
		s += " in " + listString(p.In, " ")
	}
	if p.VLo < p.VHi {
		s += fmt.Sprintf(" values [%d,%d)", p.VLo, p.VHi)
	}
	if p.Mod != 0 {
		s += fmt.Sprintf(" mod %d = %d", p.Mod, p.Rem)
	}
	return s
}

// sortedRows returns rows sorted by key, then value.
func sortedRows(rows []Row) []Row {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b Row) int {
		if a.Key != b.Key {
			return cmp.Compare(a.Key, b.Key)
		}
		return cmp.Compare(a.Value, b.Value)
	})
	return out
}

func (op Op) String() string {
	switch op.Kind {
	case Write:
		return fmt.Sprintf("w(%d,%d)", op.Key, op.Value)
	case Read:
		return fmt.Sprintf("r(%d)=%d", op.Key, op.Value)
	case Append:
		return fmt.Sprintf("append(%d,%d)", op.Key, op.Value)
	case Insert:
		return fmt.Sprintf("insert(%d,%d)", op.Key, op.Value)
	case Delete:
		return fmt.Sprintf("delete(%d)", op.Key)
	case ReadAbsent:
		return fmt.Sprintf("r(%d)=absent", op.Key)
	case PredRead:
		var b bytes.Buffer
		fmt.Fprintf(&b, "select(%v)={", op.Pred)
		for i, r := range sortedRows(op.Rows) {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "(%d,%d)", r.Key, r.Value)
		}
		b.WriteByte('}')
		return b.String()
	default:
		return fmt.Sprintf("r(%d)=%s", op.Key, listString(op.List, " "))
	}
}

// Clone returns a deep copy of h.
func (h *History) Clone() *History {
	c := &History{Txns: make([]Txn, len(h.Txns))}
	for i, t := range h.Txns {
		c.Txns[i] = t
		c.Txns[i].Ops = make([]Op, len(t.Ops))
		for j, op := range t.Ops {
			c.Txns[i].Ops[j] = op
			if op.List != nil {
				c.Txns[i].Ops[j].List = append([]int64{}, op.List...)
			}
			if op.Pred != nil {
				p := *op.Pred
				if p.In != nil {
					p.In = slices.Clone(p.In)
				}
				c.Txns[i].Ops[j].Pred = &p
			}
			if op.Rows != nil {
				c.Txns[i].Ops[j].Rows = slices.Clone(op.Rows)
			}
		}
	}
	return c
}
