package execoracle

import (
	"bytes"
	"fmt"
	"math"
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

// The levels, weakest first (PC and PSI are incomparable).
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
)

var levelNames = [...]string{"", "rc", "ra", "cc", "pc", "psi", "si", "ser", "strict-ser", "mixed"}

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

// The operations.
const (
	Write    OpKind = iota // w(k,v) on a register
	Read                   // r(k)=v on a register
	Append                 // append(k,v) to a list
	ReadList               // r(k)=[v1..vn] of a list
)

// Op is one operation. Value is used by Write, Read and Append; List by
// ReadList.
type Op struct {
	Kind  OpKind
	Key   int64
	Value int64
	List  []int64
}

// W, R, A and L build operations.
func W(k, v int64) Op           { return Op{Kind: Write, Key: k, Value: v} }
func R(k, v int64) Op           { return Op{Kind: Read, Key: k, Value: v} }
func A(k, v int64) Op           { return Op{Kind: Append, Key: k, Value: v} }
func L(k int64, vs ...int64) Op { return Op{Kind: ReadList, Key: k, List: append([]int64{}, vs...)} }

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

func (op Op) String() string {
	switch op.Kind {
	case Write:
		return fmt.Sprintf("w(%d,%d)", op.Key, op.Value)
	case Read:
		return fmt.Sprintf("r(%d)=%d", op.Key, op.Value)
	case Append:
		return fmt.Sprintf("append(%d,%d)", op.Key, op.Value)
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
		}
	}
	return c
}
