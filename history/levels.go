package history

import (
	"fmt"
	"strings"
)

// The isolation levels hyperiso knows, as data: one row per level, and
// every name, parser, list, implication and per-level property elsewhere
// derives from this table (Levels). Adding a level is a row here plus its
// engine's code.

// Level is an isolation level, used both for what a check asks and for the
// optional level a transaction declares (mixed-level histories).
type Level uint8

const (
	// LevelNone means no level was declared.
	LevelNone Level = iota
	// RC is read committed.
	RC
	// RA is read atomic.
	RA
	// CC is causal consistency.
	CC
	// SI is snapshot isolation.
	SI
	// SER is serializability.
	SER
	// StrictSER is serializability whose order also respects real time:
	// a transaction that completed before another was invoked precedes it.
	StrictSER
	// PC is prefix consistency: CC whose transactions see a prefix of one
	// arbitration order (no long fork). Between CC and SI, beside PSI.
	PC
	// PSI is parallel snapshot isolation: CC without write-write conflicts
	// between concurrent transactions (no lost update; long forks allowed).
	PSI
	// RR is repeatable read, Adya's PL-2.99: item reads as at SER, and
	// the rows a predicate read does not return as at RC, so phantoms,
	// predicate-many-preceders and write skew through predicates are
	// allowed (docs/predicates.md). Between SER and RC, incomparable with
	// RA through SI.
	RR
	// Mixed asks that each transaction satisfy its own declared level
	// (MixIso, Definition 3.5); it is what a check asks, never a level a
	// transaction declares, and implies nothing but itself.
	Mixed
)

// Engine names the checker that decides a level.
type Engine uint8

const (
	// NoEngine: not a level a check asks for.
	NoEngine Engine = iota
	// Strong is the SAT-backed engine (package strong).
	Strong
	// Weak is saturation (package weak).
	Weak
)

// LevelRow describes one level.
type LevelRow struct {
	Level Level
	// Name is how the command line, files and reports spell it.
	Name string
	// Aliases are other spellings ParseLevel accepts.
	Aliases []string
	// Words name it as a database engineer knows it.
	Words string
	// Elle is the name of Elle's consistency model closest to it.
	Elle string
	// Below are the levels it directly implies (forbids all they forbid).
	Below []Level
	// Engine decides it.
	Engine Engine
	// Declarable: a transaction may declare it in a mixed-level history.
	Declarable bool
	// SeesPrefix: every read sees a prefix of each key's version order
	// (PREFIX or TOTALVis), so a list read that holds a transaction's
	// append saw every earlier appender without being told (history's
	// ListOptions.Visibility).
	SeesPrefix bool
	// RealTime: real-time order is part of the level.
	RealTime bool
	// TransitiveVis: a transaction sees what the transactions it sees saw
	// (TRANSVis; PREFIX and TOTALVis imply it).
	TransitiveVis bool
	// NoConflict: writers of one key see each other (MixIso's NoConflict,
	// or TOTALVis), so an appender that read the key installs its block
	// right after what it read.
	NoConflict bool
	// TotalVis: a transaction sees every transaction arbitrated before it
	// (MixIso's TOTALVis), so its snapshot is its commit.
	TotalVis bool
	// ReadsApart: each read of a transaction has a visible set of its own,
	// growing along program order, and the rows of one predicate read are
	// not ordered among themselves (RC's reads, and RR's).
	ReadsApart bool
	// PredicateRWFree: predicate anti-dependencies (a row a predicate read
	// did not return, then changed by a later writer) may point backwards;
	// only item anti-dependencies must point forward (PL-2.99).
	PredicateRWFree bool
	// Strategies names the table of solver strategies that decides it
	// (the engine owns the tables: strong.StrategiesFor); "" when the
	// level takes no --strategy.
	Strategies string
	// Summary says in one line what it guarantees.
	Summary string
	// Definition says which definition hyperiso follows where checkers
	// differ (check --help prints it).
	Definition string
}

// Levels is the table, in the order help texts list them (strongest first).
var Levels = []LevelRow{
	{
		Level: StrictSER, Name: "strict-ser", Aliases: []string{"strict-serializable", "strict"},
		Words: "STRICT SERIALIZABLE", Elle: "strict-serializable",
		Below: []Level{SER}, Engine: Strong, SeesPrefix: true, TransitiveVis: true, RealTime: true,
		Strategies: "graph",
		NoConflict: true, TotalVis: true,
		Summary:    "serializable in an order that respects real time",
		Definition: "ser whose order also contains real time (Elle's strict serializability); needs invocation and completion times",
	},
	{
		Level: SER, Name: "ser", Aliases: []string{"serializable", "SER"},
		Words: "SERIALIZABLE", Elle: "strong-session-serializable",
		Below: []Level{SI, RR}, Engine: Strong, Declarable: true, SeesPrefix: true, TransitiveVis: true,
		Strategies: "graph",
		NoConflict: true, TotalVis: true,
		Summary:    "some serial order explains every read",
		Definition: "a serial order that contains session order (Elle's \"strong session serializable\"; dbcop, Cobra, PolySI and VeriStrong include session order as well)",
	},
	{
		Level: RR, Name: "rr", Aliases: []string{"repeatable-read", "RR"},
		Words: "REPEATABLE READ", Elle: "repeatable-read",
		Below: []Level{RC}, Engine: Strong, Declarable: true, SeesPrefix: true, TransitiveVis: true,
		NoConflict: true, TotalVis: true, ReadsApart: true, PredicateRWFree: true,
		Summary:    "serializable for items; a predicate read may miss rows that changed",
		Definition: "Adya's PL-2.99: item reads (point reads and the rows a predicate read returns) see the latest version before the transaction, as at ser; a row a predicate read did not return is observed as at rc, so phantoms and write skew through predicates are allowed (docs/predicates.md). Without predicate reads it is ser. Decided by the mixed engine's search, every transaction at rr",
	},
	{
		Level: SI, Name: "si", Aliases: []string{"snapshot", "snapshot-isolation", "SI"},
		Words: "SNAPSHOT ISOLATION", Elle: "strong-session-snapshot-isolation",
		Below: []Level{PC, PSI}, Engine: Strong, Declarable: true, SeesPrefix: true, TransitiveVis: true,
		Strategies: "graph",
		NoConflict: true,
		Summary:    "each transaction reads a snapshot, and no two concurrent transactions write one key",
		Definition: "a commit order with snapshots that contains session order (strong session SI), checked on the induced graph of Cerone and Gotsman, as PolySI and VeriStrong",
	},
	{
		Level: PSI, Name: "psi", Aliases: []string{"parallel-snapshot-isolation", "PSI"},
		Words: "PARALLEL SNAPSHOT ISOLATION", Elle: "parallel-snapshot-isolation",
		Below: []Level{CC}, Engine: Strong, Declarable: true, TransitiveVis: true,
		Strategies: "psi-theory",
		NoConflict: true,
		Summary:    "causal, and no two concurrent transactions write one key (long forks allowed)",
		Definition: "parallel snapshot isolation with session order: for some version order, no dependency cycle has at most one rw edge (Cerone and Gotsman); long forks allowed, lost updates not. Decided by the CDCL(T) solver keeping so, wr and ww acyclic with no rw edge whose head reaches its tail (docs/mixed.md)",
	},
	{
		Level: PC, Name: "pc", Aliases: []string{"prefix", "prefix-consistency", "PC"},
		Words: "PREFIX CONSISTENCY", Elle: "prefix",
		Below: []Level{CC}, Engine: Strong, Declarable: true, SeesPrefix: true, TransitiveVis: true,
		Strategies: "pc-theory",
		Summary:    "each transaction sees a prefix of one commit order (lost updates allowed)",
		Definition: "prefix consistency with session order: each transaction sees a prefix of one order (MixIso's PC); lost updates allowed, long forks not. Decided by the CDCL(T) solver keeping a graph of snapshots and commits acyclic (docs/mixed.md)",
	},
	{
		Level: CC, Name: "cc", Aliases: []string{"causal", "CC"},
		Words: "CAUSAL", Elle: "causal-cerone",
		Below: []Level{RA}, Engine: Weak, Declarable: true, TransitiveVis: true,
		Summary:    "what a transaction saw, its successors see too",
		Definition: "the commit-order axiom of Biswas and Enea for causal consistency, as AWDIT and dbcop",
	},
	{
		Level: RA, Name: "ra", Aliases: []string{"read-atomic", "RA"},
		Words: "READ ATOMIC", Elle: "read-atomic",
		Below: []Level{RC}, Engine: Weak, Declarable: true,
		Summary:    "a transaction sees all or none of another's writes",
		Definition: "the commit-order axiom of Biswas and Enea for read atomic, as AWDIT and dbcop",
	},
	{
		Level: RC, Name: "rc", Aliases: []string{"read-committed", "RC"},
		Words: "READ COMMITTED", Elle: "read-committed",
		Engine: Weak, Declarable: true, ReadsApart: true,
		Summary:    "reads see committed writes, never going back",
		Definition: "the commit-order axiom of Biswas and Enea for read committed, as AWDIT and dbcop; it includes monotonic reads inside a transaction, so it is stronger than Adya's PL-2, which forbids only G0 and G1",
	},
	{
		Level: Mixed, Name: "mixed",
		Words: "MIXED", Elle: "mixed",
		Engine:     Strong,
		Summary:    "each transaction satisfies its own declared level",
		Definition: "each transaction at the level it declares (JSONL \"level\", else --default-level), as MixIso defines mixing (Definition 3.5) for ra, cc, pc, psi, si, ser; an rc transaction's reads each see a growing set of writers (docs/mixed.md), and an rr transaction reads items as ser and predicates as rc (docs/predicates.md). A violation names the transaction whose level fails and the axiom",
	},
}

// rowOf indexes Levels by Level.
var rowOf = func() []int {
	out := make([]int, Mixed+1)
	for i := range out {
		out[i] = -1
	}
	for i, r := range Levels {
		out[r.Level] = i
	}
	return out
}()

// Row returns l's row, and whether l has one (LevelNone has none).
func (l Level) Row() (LevelRow, bool) {
	if int(l) < len(rowOf) && rowOf[l] >= 0 {
		return Levels[rowOf[l]], true
	}
	return LevelRow{}, false
}

// implies[l] has bit w set when l implies w: every behaviour w forbids, l
// forbids too. The levels form a partial order, not a chain: PC and PSI
// both lie between CC and SI and neither implies the other (MixIso,
// Theorem 3.4).
var implies = func() []uint16 {
	m := make([]uint16, Mixed+1)
	var add func(l, w Level)
	add = func(l, w Level) {
		m[l] |= 1 << w
		r, _ := w.Row()
		for _, v := range r.Below {
			add(l, v)
		}
	}
	for _, r := range Levels {
		add(r.Level, r.Level)
	}
	return m
}()

// AtLeast reports whether l is at least as strong as w: every behaviour w
// forbids, l forbids too. LevelNone implies nothing but itself.
func (l Level) AtLeast(w Level) bool {
	if l == w {
		return true
	}
	return int(l) < len(implies) && int(w) < len(implies) && implies[l]&(1<<w) != 0
}

func (l Level) String() string {
	if l == LevelNone {
		return ""
	}
	if r, ok := l.Row(); ok {
		return r.Name
	}
	return fmt.Sprintf("Level(%d)", l)
}

// SeesPrefix reports l's row's SeesPrefix: every read sees a prefix of
// each key's version order (PREFIX, TOTALVis).
func (l Level) SeesPrefix() bool {
	r, _ := l.Row()
	return r.SeesPrefix
}

// TransitiveVis reports l's row's TransitiveVis: a transaction sees what
// the transactions it sees saw.
func (l Level) TransitiveVis() bool {
	r, _ := l.Row()
	return r.TransitiveVis
}

// NoConflict reports l's row's NoConflict: writers of one key see each
// other.
func (l Level) NoConflict() bool {
	r, _ := l.Row()
	return r.NoConflict
}

// TotalVis reports l's row's TotalVis: a transaction sees every
// transaction arbitrated before it.
func (l Level) TotalVis() bool {
	r, _ := l.Row()
	return r.TotalVis
}

// ReadsApart reports l's row's ReadsApart: each read has its own visible
// set, and a predicate read's rows are not ordered among themselves.
func (l Level) ReadsApart() bool {
	r, _ := l.Row()
	return r.ReadsApart
}

// PredicateRWFree reports l's row's PredicateRWFree: predicate
// anti-dependencies may point backwards.
func (l Level) PredicateRWFree() bool {
	r, _ := l.Row()
	return r.PredicateRWFree
}

// Words names l as a database engineer knows it ("SNAPSHOT ISOLATION").
func (l Level) Words() string {
	r, _ := l.Row()
	return r.Words
}

// ParseLevel accepts every level's name and aliases (Levels).
func ParseLevel(s string) (Level, bool) {
	for _, r := range Levels {
		if s == r.Name {
			return r.Level, true
		}
		for _, a := range r.Aliases {
			if s == a {
				return r.Level, true
			}
		}
	}
	return LevelNone, false
}

// LevelNames returns the names of the levels keep accepts, in table order
// (all of them when keep is nil).
func LevelNames(keep func(LevelRow) bool) []string {
	var out []string
	for _, r := range Levels {
		if keep == nil || keep(r) {
			out = append(out, r.Name)
		}
	}
	return out
}

// LevelList joins LevelNames(keep) with sep ("ser|si|…").
func LevelList(sep string, keep func(LevelRow) bool) string {
	return strings.Join(LevelNames(keep), sep)
}

// IsDeclarable reports whether a transaction may declare r's level.
func IsDeclarable(r LevelRow) bool { return r.Declarable }

// Definitions renders the Definition column for a help text: one entry
// per level, wrapped to width, then what every level shares.
func Definitions(width int) string {
	var b strings.Builder
	b.WriteString("Which definition each level follows, where checkers differ:\n")
	entry := func(name, text string) {
		const indent = 14
		line := fmt.Sprintf("  %-*s", indent-2, name)
		for _, w := range strings.Fields(text) {
			if len(line)+1+len(w) > width && len(line) > indent {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = strings.Repeat(" ", indent)
			} else if len(line) > indent {
				line += " "
			}
			line += w
		}
		b.WriteString(line + "\n")
	}
	for _, r := range Levels {
		entry(r.Name, r.Definition)
	}
	entry("all", AllLevels)
	return b.String()
}

// AllLevels is what every level shares.
const AllLevels = "list-append reads mean one version order per key, each version whole blocks of appends (docs/formats.md): what a list shows on its own (internal, incompatible-order, …) violates every level; a transaction of unknown outcome may or may not have committed"
