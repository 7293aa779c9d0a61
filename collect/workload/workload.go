// Package workload generates the transactions that hyperiso collect runs
// against a store: the VeriStrong general generator with its RH, BL, WH and
// HD presets, Cobra's blindw-rw, Jepsen's list-append (append) and
// rw-register, rows under range reads (predicate), and two baits
// (write-skew, lost-update) that expose weak isolation quickly. Application
// workloads (collect/apps) come in through NewApp: their transactions are
// Programs, code that runs against the store and records what it read and
// wrote. A workload is a pure function of its
// Config: the same seed gives the same transactions in every session, and
// the choice of keys and operations never depends on the values written, so
// a duplicate-value run and its unique-value twin differ only in values.
package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OpKind is the kind of one planned operation.
type OpKind uint8

const (
	// Read reads a key.
	Read OpKind = iota
	// Write writes Value to a key.
	Write
	// Pause makes the client wait for Pause before the next operation (the
	// think time of the baits, which widens the window for a conflict).
	Pause
	// Append appends Value to the list at a key.
	Append
	// ReadList reads the whole list at a key.
	ReadList
	// Insert makes row Key live with Value (predicate.go's row
	// operations follow).
	Insert
	// Delete makes row Key absent.
	Delete
	// Select reads the rows with Key <= key < To.
	Select
	// Move moves row Key to key To with Value.
	Move
	// ReadRow reads row Key: its value, or its absence.
	ReadRow
)

func (k OpKind) String() string {
	switch k {
	case Read:
		return "r"
	case Write:
		return "w"
	case Pause:
		return "pause"
	case Append:
		return "append"
	case ReadList:
		return "r-list"
	case Insert:
		return "insert"
	case Delete:
		return "delete"
	case Select:
		return "select"
	case Move:
		return "move"
	case ReadRow:
		return "r-row"
	}
	return fmt.Sprintf("OpKind(%d)", k)
}

// Op is one planned operation.
type Op struct {
	Kind  OpKind
	Key   int64
	Value int64
	// To is the end of a Select's range (excluded) and a Move's target.
	To    int64
	Pause time.Duration
}

// Txn is one planned transaction: its operations in program order, and
// whether the client rolls it back instead of committing.
type Txn struct {
	Ops      []Op
	Rollback bool
	// Type names an application transaction's type (NewOrder, Payment,
	// …), which a level per type keys on; "" for generated ones.
	Type string
	// Program, if set, is the transaction (Ops is then empty): it runs
	// against the store and records its own reads and writes.
	Program Program
}

// Names lists the workloads, the default first.
var Names = []string{"general", "blindw-rw", "append", "rw-register", "predicate", "write-skew", "lost-update"}

// Presets lists the presets of the general workload (VeriStrong §7.1).
var Presets = []string{"RH", "BL", "WH", "HD"}

// UniqueBase is the factor of the session number in a unique value: the
// q-th value session s writes is s*UniqueBase + q, so 3000000017 is session
// 3's 17th write. Duplicate values are 1…ValueSpace, and keys start at 0,
// so the three never meet.
const UniqueBase = 1_000_000_000

// maxValueSpace bounds ValueSpace (the Zipf table has one entry per value).
const maxValueSpace = 1 << 22

// Config holds every parameter of a workload. Fields a workload does not
// use are ignored (and left out of Describe).
type Config struct {
	// Sessions is the number of concurrent client sessions.
	Sessions int
	// Txns is the number of transactions each session runs.
	Txns int
	// Ops is the number of operations per transaction (general,
	// blindw-rw), their maximum (append: 1…Ops, uniformly), or the number
	// of read-modify-write pairs per transaction (lost-update).
	Ops int
	// Reads is the proportion of reads among operations (general; list
	// reads in append; range and point reads in predicate) or of
	// read-only transactions (blindw-rw).
	Reads float64
	// Keys is the number of keys, 1…Keys, all seeded with 0 (with the
	// empty list for append). write-skew uses them in pairs (1,2), (3,4), ….
	Keys int64
	// DupKeys is the proportion of keys whose written values repeat: a
	// write to such a key writes a value in 1…ValueSpace drawn from a
	// Zipf distribution of degree Theta. Other keys get unique values.
	DupKeys float64
	// Theta is the Zipf degree of the repeated values (0 = uniform).
	Theta float64
	// ValueSpace is N, the number of distinct repeated values.
	ValueSpace int64
	// RollbackRate is the proportion of transactions the client rolls
	// back instead of committing.
	RollbackRate float64
	// Think is a pause between the reads and the writes of a bait
	// transaction.
	Think time.Duration
	// MaxList retires keys (append, rw-register, where it bounds writes
	// per key): with MaxList > 0 each session's
	// transactions come in generations of ListGeneration transactions,
	// as many as make a key expect about MaxList appends over all
	// sessions, and generation g appends to and reads keys g·Keys+1 …
	// (g+1)·Keys, so that lists stay about MaxList long (Jepsen's
	// max-writes-per-key). 0 keeps keys 1…Keys all along.
	MaxList int
	// Seed makes the workload reproducible.
	Seed int64
	// Preset names the general preset applied, for the record.
	Preset string
}

// Defaults returns the default Config of the named workload.
func Defaults(name string) (Config, error) {
	c := Config{Theta: 0.5, ValueSpace: 100, Seed: 1}
	switch name {
	case "general":
		// VeriStrong §7.1's defaults.
		c.Sessions, c.Txns, c.Ops, c.Reads, c.Keys, c.DupKeys = 20, 100, 20, 0.5, 5000, 0.5
	case "blindw-rw":
		// Cobra's BlindW-RW: half read-only, half write-only, 8 operations.
		c.Sessions, c.Txns, c.Ops, c.Reads, c.Keys = 20, 100, 8, 0.5, 1000
	case "append", "rw-register":
		// Jepsen's list-append and rw-register: 1 to 4 operations, half
		// of them reads, over a few keys at a time, which retire at
		// about 32 appends (writes), so that transactions meet.
		c.Sessions, c.Txns, c.Ops, c.Reads, c.Keys, c.MaxList = 10, 100, 4, 0.5, 10, 32
	case "predicate":
		// Rows coming and going under range reads: 4 operations, half
		// of them reads, over 12 keys that start absent.
		c.Sessions, c.Txns, c.Ops, c.Reads, c.Keys = 8, 50, 4, 0.5, 12
	case "write-skew":
		c.Sessions, c.Txns, c.Keys = 8, 50, 2
	case "lost-update":
		c.Sessions, c.Txns, c.Ops, c.Keys = 8, 50, 1, 2
	default:
		return c, fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	return c, nil
}

// ApplyPreset sets the parameters a general preset fixes: RH (95% reads),
// BL (50% reads), WH (30% reads, i.e. 70% writes) and HD (BL with Zipf
// degree 1.5). Preset names are case-insensitive.
func ApplyPreset(c *Config, preset string) error {
	p := strings.ToUpper(preset)
	switch p {
	case "RH":
		c.Reads = 0.95
	case "BL":
		c.Reads = 0.5
	case "WH":
		c.Reads = 0.3
	case "HD":
		c.Reads, c.Theta = 0.5, 1.5
	default:
		return fmt.Errorf("unknown preset %q (want one of %s)", preset, strings.Join(Presets, ", "))
	}
	c.Preset = p
	return nil
}

// Workload is a validated workload, ready to hand out session generators.
type Workload struct {
	name   string
	cfg    Config
	zipf   *zipf
	dupKey func(key int64) bool
	next   func(g *Session) Txn
	app    App // an application workload's, nil otherwise
}

// New validates c for the named workload.
func New(name string, c Config) (*Workload, error) {
	w := &Workload{name: name, cfg: c}
	switch name {
	case "general":
		w.next = nextGeneral
	case "blindw-rw":
		w.next = nextBlindWRW
	case "append":
		w.next = nextAppend
	case "rw-register":
		w.next = nextRWRegister
	case "predicate":
		w.next = nextPredicate
	case "write-skew":
		w.next = nextWriteSkew
	case "lost-update":
		w.next = nextLostUpdate
	default:
		return nil, fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	if c.Preset != "" && name != "general" {
		return nil, fmt.Errorf("presets belong to the general workload, not %s", name)
	}
	if err := w.validate(); err != nil {
		return nil, fmt.Errorf("workload %s: %w", name, err)
	}
	if c.DupKeys > 0 {
		w.zipf = newZipf(c.Theta, c.ValueSpace)
	}
	// Key k repeats its values iff ⌊k·p⌋ > ⌊(k−1)·p⌋: exactly ⌊Keys·p⌋
	// keys, spread evenly over the key range.
	p := c.DupKeys
	w.dupKey = func(k int64) bool {
		return p > 0 && int64(float64(k)*p) > int64(float64(k-1)*p)
	}
	return w, nil
}

func (w *Workload) validate() error {
	c := &w.cfg
	switch {
	case c.Sessions < 1:
		return fmt.Errorf("sessions must be at least 1 (got %d)", c.Sessions)
	case c.Txns < 0:
		return fmt.Errorf("transactions per session must not be negative (got %d)", c.Txns)
	case c.Keys < 1:
		return fmt.Errorf("keys must be at least 1 (got %d)", c.Keys)
	case c.Reads < 0 || c.Reads > 1:
		return fmt.Errorf("read proportion must be in [0,1] (got %g)", c.Reads)
	case c.DupKeys < 0 || c.DupKeys > 1:
		return fmt.Errorf("duplicate-key proportion must be in [0,1] (got %g)", c.DupKeys)
	case c.RollbackRate < 0 || c.RollbackRate > 1:
		return fmt.Errorf("rollback rate must be in [0,1] (got %g)", c.RollbackRate)
	case c.Theta < 0:
		return fmt.Errorf("zipf degree theta must not be negative (got %g)", c.Theta)
	case c.DupKeys > 0 && (c.ValueSpace < 1 || c.ValueSpace > maxValueSpace):
		return fmt.Errorf("value space must be in [1,%d] (got %d)", maxValueSpace, c.ValueSpace)
	case c.Think < 0:
		return fmt.Errorf("think time must not be negative (got %s)", c.Think)
	case c.MaxList < 0:
		return fmt.Errorf("the maximum list length must not be negative (got %d)", c.MaxList)
	case int64(c.Sessions) >= (1<<63-1)/UniqueBase-1:
		return fmt.Errorf("too many sessions (%d)", c.Sessions)
	}
	if w.name != "write-skew" && c.Ops < 1 {
		return fmt.Errorf("operations per transaction must be at least 1 (got %d)", c.Ops)
	}
	if w.name == "append" && c.DupKeys > 0 {
		return fmt.Errorf("appended values are unique, so that a list read names its appenders: dup-keys must be 0 (got %g)", c.DupKeys)
	}
	if w.name == "rw-register" && c.DupKeys > 0 {
		return fmt.Errorf("rw-register writes unique values, so that a read names its writer: dup-keys must be 0 (got %g)", c.DupKeys)
	}
	if w.name == "predicate" && c.Keys < 2 {
		return fmt.Errorf("the predicate workload moves rows between keys: keys must be at least 2 (got %d)", c.Keys)
	}
	if w.name == "predicate" && c.DupKeys > 0 {
		return fmt.Errorf("the predicate workload writes unique values, so that a range read names its writers: dup-keys must be 0 (got %g)", c.DupKeys)
	}
	if w.name == "write-skew" && c.Keys%2 != 0 {
		return fmt.Errorf("write-skew uses keys in pairs: keys must be even (got %d)", c.Keys)
	}
	if writes := int64(c.Txns) * int64(max(c.Ops, 2)); writes >= UniqueBase {
		return fmt.Errorf("a session would write %d values, more than unique values can number (%d)", writes, UniqueBase-1)
	}
	return nil
}

// Name returns the workload's name.
func (w *Workload) Name() string { return w.name }

// Config returns the workload's parameters.
func (w *Workload) Config() Config { return w.cfg }

// Sessions returns the number of sessions.
func (w *Workload) Sessions() int { return w.cfg.Sessions }

// TxnsPerSession returns the number of transactions each session runs.
func (w *Workload) TxnsPerSession() int { return w.cfg.Txns }

// Keys returns the number of keys (1…Keys) the store must seed with 0 (or
// with the empty list, if Lists): Config.Keys, times the generations of
// keys when append retires them (Config.MaxList).
func (w *Workload) Keys() int64 {
	if w.app != nil {
		return 0
	}
	if g := w.ListGeneration(); g > 0 {
		return w.cfg.Keys * int64((w.cfg.Txns+g-1)/g)
	}
	return w.cfg.Keys
}

// ListGeneration returns how many transactions of a session use one
// generation of keys before they retire (append or rw-register with MaxList > 0: as many
// as make each key expect about MaxList appends over all sessions, at
// least 1), or 0 if keys never retire.
func (w *Workload) ListGeneration() int {
	c := &w.cfg
	if (w.name != "append" && w.name != "rw-register") || c.MaxList == 0 || c.Reads >= 1 {
		return 0
	}
	appends := float64(c.Sessions) * float64(1+c.Ops) / 2 * (1 - c.Reads) // per transaction of every session
	return max(1, min(c.Txns, int(float64(c.MaxList)*float64(c.Keys)/appends)))
}

// Lists reports whether the workload appends to and reads lists (Append
// and ReadList operations) rather than registers: its store must hold
// lists (collect.ListStore), each key seeded with the empty list.
func (w *Workload) Lists() bool { return w.name == "append" }

// DupKey reports whether writes to key k draw from the repeated values.
func (w *Workload) DupKey(k int64) bool { return w.dupKey(k) }

// Describe renders the parameters the workload uses as "name=value" pairs
// separated by spaces, in a fixed order, for a history's metadata.
func (w *Workload) Describe() string {
	if w.app != nil {
		return w.describeApp()
	}
	c := &w.cfg
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	if c.Preset != "" {
		add("preset", c.Preset)
	}
	add("sessions", strconv.Itoa(c.Sessions))
	add("txns", strconv.Itoa(c.Txns))
	if w.name != "write-skew" {
		add("ops", strconv.Itoa(c.Ops))
	}
	if w.name == "general" || w.name == "blindw-rw" || w.name == "append" || w.name == "rw-register" || w.name == "predicate" {
		add("reads", f(c.Reads))
	}
	add("keys", strconv.FormatInt(c.Keys, 10))
	if (w.name == "append" || w.name == "rw-register") && c.MaxList > 0 {
		add("max-list", strconv.Itoa(c.MaxList))
	}
	add("dup-keys", f(c.DupKeys))
	if c.DupKeys > 0 {
		add("theta", f(c.Theta))
		add("value-space", strconv.FormatInt(c.ValueSpace, 10))
	}
	if c.RollbackRate > 0 {
		add("rollback-rate", f(c.RollbackRate))
	}
	if c.Think > 0 {
		add("think", c.Think.String())
	}
	add("seed", strconv.FormatInt(c.Seed, 10))
	return strings.Join(parts, " ")
}

// Session is the generator of one session's transactions. It is not safe
// for concurrent use; each session has its own.
type Session struct {
	w *Workload
	// number is the 1-based session number encoded in unique values.
	number int64
	ops    *rand.Rand // operation kinds and keys
	vals   *rand.Rand // repeated values only
	seq    int64      // values written so far
	txn    int        // transactions generated so far
	buf    []Op
	app    func() Txn // an application workload's generator
}

// Session returns the generator of session i (0-based). Generators of the
// same workload and i produce the same transactions.
func (w *Workload) Session(i int) *Session {
	if w.app != nil {
		return &Session{w: w, app: w.app.Session(i)}
	}
	s := uint64(w.cfg.Seed)
	return &Session{
		w:      w,
		number: int64(i) + 1,
		ops:    rand.New(rand.NewPCG(s, 2*uint64(i)+1)),
		vals:   rand.New(rand.NewPCG(s^0x9e3779b97f4a7c15, 2*uint64(i)+2)),
	}
}

// Next returns the session's next transaction. Its Ops slice is fresh.
func (g *Session) Next() Txn {
	if g.app != nil {
		return g.app()
	}
	g.buf = g.buf[:0]
	t := g.w.next(g)
	g.txn++
	t.Ops = slices.Clone(g.buf)
	if g.w.cfg.RollbackRate > 0 && g.ops.Float64() < g.w.cfg.RollbackRate {
		t.Rollback = true
	}
	return t
}

// value returns the value of the session's next write to key: the next
// unique value, or for a repeating key a Zipf draw. The sequence number
// advances either way, so a twin run's unique values coincide.
func (g *Session) value(key int64) int64 {
	g.seq++
	if g.w.dupKey(key) {
		return g.w.zipf.draw(g.vals)
	}
	return g.number*UniqueBase + g.seq
}

func (g *Session) key() int64 { return 1 + g.ops.Int64N(g.w.cfg.Keys) }

func (g *Session) read(k int64)  { g.buf = append(g.buf, Op{Kind: Read, Key: k}) }
func (g *Session) write(k int64) { g.buf = append(g.buf, Op{Kind: Write, Key: k, Value: g.value(k)}) }
func (g *Session) appendTo(k int64) {
	g.buf = append(g.buf, Op{Kind: Append, Key: k, Value: g.value(k)})
}
func (g *Session) readList(k int64) { g.buf = append(g.buf, Op{Kind: ReadList, Key: k}) }
func (g *Session) think() {
	if g.w.cfg.Think > 0 {
		g.buf = append(g.buf, Op{Kind: Pause, Pause: g.w.cfg.Think})
	}
}

// nextGeneral: Ops operations, each a read with probability Reads, on
// uniformly chosen keys.
func nextGeneral(g *Session) Txn {
	for range g.w.cfg.Ops {
		isRead := g.ops.Float64() < g.w.cfg.Reads
		k := g.key()
		if isRead {
			g.read(k)
		} else {
			g.write(k)
		}
	}
	return Txn{}
}

// nextBlindWRW: a read-only transaction with probability Reads, otherwise
// a write-only one, each of Ops operations on uniformly chosen keys.
func nextBlindWRW(g *Session) Txn {
	readOnly := g.ops.Float64() < g.w.cfg.Reads
	for range g.w.cfg.Ops {
		k := g.key()
		if readOnly {
			g.read(k)
		} else {
			g.write(k)
		}
	}
	return Txn{}
}

// nextWriteSkew: read both keys of a random pair, then write one of them.
// Two such transactions on one pair that write different keys form a
// write skew, which snapshot isolation allows and serializability does not.
func nextWriteSkew(g *Session) Txn {
	pair := g.ops.Int64N(g.w.cfg.Keys / 2)
	x, y := 2*pair+1, 2*pair+2
	if g.ops.IntN(2) == 1 {
		x, y = y, x
	}
	g.read(x)
	g.read(y)
	g.think()
	if g.ops.IntN(2) == 1 {
		g.write(x)
	} else {
		g.write(y)
	}
	return Txn{}
}

// nextLostUpdate: Ops read-modify-write pairs (read a key, then write it)
// on random keys. Two such transactions that read the same version and
// both commit lose an update, which snapshot isolation forbids.
func nextLostUpdate(g *Session) Txn {
	keys := make([]int64, g.w.cfg.Ops)
	for i := range keys {
		keys[i] = g.key()
		g.read(keys[i])
	}
	g.think()
	for _, k := range keys {
		g.write(k)
	}
	return Txn{}
}

// nextAppend: Jepsen's list-append. 1 to Ops operations (uniformly), each
// a read of a whole list with probability Reads, else an append of a
// unique value, on keys chosen uniformly among the generation's (all of
// them, unless MaxList retires keys). Values are unique across the
// run, so that every element of a list read names the transaction that
// appended it.
func nextAppend(g *Session) Txn {
	g.jepsen(g.readList, g.appendTo)
	return Txn{}
}

// nextRWRegister: Jepsen's rw-register, append's twin over registers: 1
// to Ops reads and writes of unique values on the generation's keys.
func nextRWRegister(g *Session) Txn {
	g.jepsen(g.read, g.write)
	return Txn{}
}

// jepsen plans 1 to Ops operations (uniformly), each a read with
// probability Reads, else a write, on keys chosen uniformly among the
// generation's.
func (g *Session) jepsen(read, write func(k int64)) {
	n := 1 + g.ops.IntN(g.w.cfg.Ops)
	var base int64 // the first key of the generation, less one
	if gen := g.w.ListGeneration(); gen > 0 {
		base = int64(g.txn/gen) * g.w.cfg.Keys
	}
	for range n {
		isRead := g.ops.Float64() < g.w.cfg.Reads
		k := base + g.key()
		if isRead {
			read(k)
		} else {
			write(k)
		}
	}
}
